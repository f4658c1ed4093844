package convert

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadHFConfigTextConfig checks how a multimodal wrapper's text_config
// merges into the top level: its values win, as in llama.cpp's converter,
// and so does its architectures list when it has one; a null list (unset)
// leaves the wrapper's, as llama.cpp does.
func TestReadHFConfigTextConfig(t *testing.T) {
	for _, c := range []struct {
		name, json string
		arch       string
		hidden     int
	}{
		{"no text architectures", `{"architectures":["Qwen3_5ForConditionalGeneration"],"hidden_size":4,"text_config":{"hidden_size":8}}`, "Qwen3_5ForConditionalGeneration", 8},
		{"null text architectures", `{"architectures":["Qwen3_5ForConditionalGeneration"],"hidden_size":4,"text_config":{"architectures":null,"hidden_size":8}}`, "Qwen3_5ForConditionalGeneration", 8},
		{"text architectures", `{"architectures":["Qwen3_5ForConditionalGeneration"],"text_config":{"architectures":["Qwen3_5ForCausalLM"],"hidden_size":8}}`, "Qwen3_5ForCausalLM", 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(c.json), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := readHFConfig(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Architectures) != 1 || cfg.Architectures[0] != c.arch {
				t.Errorf("architectures %q, want [%s]", cfg.Architectures, c.arch)
			}
			if cfg.HiddenSize == nil || *cfg.HiddenSize != c.hidden {
				t.Errorf("hidden_size %v, want %d", cfg.HiddenSize, c.hidden)
			}
		})
	}
}
