package status

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Fetch asks a running replicate's status endpoint at addr (host:port)
// for the report of snapshot id (0: the newest) over window: what
// `paraply status` prints. It returns the report and the JSON it came as.
func Fetch(client *http.Client, addr string, window time.Duration, id int64) (Report, []byte, error) {
	var rep Report
	q := url.Values{"interval": {window.String()}}
	if id > 0 {
		q.Set("snapshot", strconv.FormatInt(id, 10))
	}
	resp, err := client.Get("http://" + addr + "/status.json?" + q.Encode())
	if err != nil {
		return rep, nil, fmt.Errorf("no paraply replicate answers on %s (start it with --http %s): %w", addr, addr, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return rep, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return rep, nil, fmt.Errorf("%s: %s: %s", addr, resp.Status, raw)
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		return rep, nil, fmt.Errorf("%s: %w", addr, err)
	}
	return rep, raw, nil
}
