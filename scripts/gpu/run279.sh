#!/usr/bin/env bash
# Session 42, main's final binaries after the before-stop review (gpu.Load
# and CheckFatbin share loadImage): run278's checks again. carry ["bin"].
exec bash scripts/gpu/run278.sh
