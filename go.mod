module github.com/memra-ai/memra

go 1.26

tool github.com/magefile/mage

require github.com/magefile/mage v1.15.0
