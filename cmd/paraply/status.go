package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/paraply/paraply/internal/status"
)

func statusCmd() *cobra.Command {
	var (
		addr     string
		watch    bool
		asJSON   bool
		interval time.Duration
	)
	cmd := &cobra.Command{
		Use:   "status [--http 127.0.0.1:PORT] [--watch]",
		Short: "Show a running replicate's lag, worker progress, coordinator statistics and a diagnosis",
		Long: `status asks a running 'paraply replicate --http ADDR' for its state: lag,
positions, the coordinator statistics of the last interval (transactions
assigned, waits on dependencies, with all workers busy, on a full window and
on commit order, and idle time waiting for the source), per-worker progress,
the hottest tables, and a diagnosis in words: that it keeps up, or why it
lags and what to change. The lag line says how the lag is dated
(receive-time, or heartbeat with replicate --heartbeat-table).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			client := &http.Client{Timeout: 5 * time.Second}
			for {
				rep, raw, err := fetchStatus(client, addr, interval)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if watch {
					fmt.Fprint(out, "\033[H\033[2J")
				}
				if asJSON {
					out.Write(raw)
				} else if err := status.WriteText(out, rep); err != nil {
					return err
				}
				if !watch {
					return nil
				}
				time.Sleep(time.Second)
			}
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "http", "127.0.0.1:9104", "address of the running replicate's --http endpoint")
	f.BoolVar(&watch, "watch", false, "refresh every second")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.DurationVar(&interval, "interval", 10*time.Second, "window of the coordinator statistics")
	return cmd
}

func fetchStatus(client *http.Client, addr string, interval time.Duration) (status.Report, []byte, error) {
	var rep status.Report
	resp, err := client.Get("http://" + addr + "/status.json?interval=" + interval.String())
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
