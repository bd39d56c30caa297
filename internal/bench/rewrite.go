package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Rewrite reads the results.json in dir and writes it again, with its
// results.md and charts, as this build computes them: the references,
// ratios, medians and the reasons given for predictions that are off.
// The measurements themselves are kept as they are, so a change to how
// results are read applies to a benchmark already run.
func Rewrite(dir string) error {
	path := filepath.Join(dir, "results.json")
	js, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var res Results
	if err := json.Unmarshal(js, &res); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return res.write(dir)
}
