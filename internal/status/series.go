package status

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Series is what the status page charts: for each sample, the figures
// over the window that ends there, computed as the report's interval is
// (between), so that the last point of each chart is the number in the
// page's header and in `paraply status`; and the charts' y axes.
type Series struct {
	// WindowSeconds is the window each point covers.
	WindowSeconds float64 `json:"window_seconds"`
	Points        []Point `json:"points"`
	// Axes are the y axes of the charts lag, throughput and utilization,
	// with their labels: the page draws them as they are.
	Axes map[string]Axis `json:"axes"`
}

// Point is one sample's figures.
type Point struct {
	ID int64 `json:"id"`
	// T is when the sample was taken, Unix seconds.
	T float64 `json:"unix_seconds"`
	// Seconds is the span the rates and shares cover: the window, or less
	// for the first samples.
	Seconds float64 `json:"seconds"`
	// Lag and LagBeyondDelay are at the sample (not averaged).
	Lag            float64 `json:"lag_seconds"`
	LagBeyondDelay float64 `json:"lag_beyond_delay_seconds"`
	Applied        float64 `json:"applied_per_second"`
	Received       float64 `json:"received_per_second"`
	Exec           float64 `json:"exec_share"`
	Turn           float64 `json:"turn_share"`
	Commit         float64 `json:"commit_share"`
	TargetWait     float64 `json:"target_wait_share"`
	Idle           float64 `json:"idle_share"`
}

// Axis is a chart's y axis: from 0 to Max, ticks at Ticks.
type Axis struct {
	Max   float64 `json:"max"`
	Ticks []Tick  `json:"ticks"`
}

// Tick is a value on an axis and its label.
type Tick struct {
	Value float64 `json:"value"`
	Label string  `json:"label"`
}

// series computes the points of samples (oldest first) over window: one
// for each sample the server took on its own (a second apart) and one for
// the last, the report's snapshot.
func series(samples []Sample, window time.Duration) *Series {
	s := &Series{WindowSeconds: window.Seconds(), Points: []Point{}}
	for i := 1; i < len(samples); i++ {
		if !samples[i].tick && i < len(samples)-1 {
			continue
		}
		// The window ending at i starts where the report's would.
		iv := between(samples[windowStart(samples[:i+1], window)], samples[i])
		if iv.Seconds <= 0 {
			continue
		}
		s.Points = append(s.Points, Point{
			ID: samples[i].ID, T: float64(samples[i].Time.UnixMicro()) / 1e6, Seconds: iv.Seconds,
			Lag: iv.LagEnd, LagBeyondDelay: iv.LagBeyondDelay,
			Applied: iv.AppliedRate, Received: iv.ReceivedRate,
			Exec: iv.ExecShare, Turn: iv.TurnShare, Commit: iv.CommitShare, TargetWait: iv.TargetWaitShare, Idle: iv.IdleShare,
		})
	}
	var lag, rate float64
	for _, p := range s.Points {
		lag = max(lag, p.Lag)
		rate = max(rate, p.Applied, p.Received)
	}
	s.Axes = map[string]Axis{"lag": durationAxis(lag), "throughput": countAxis(rate), "utilization": shareAxis()}
	return s
}

// axisTicks is about how many steps an axis is cut into.
const axisTicks = 4

// durationSteps are the steps a time axis may take, in seconds: 1, 2 and 5
// times a power of ten below a minute, then steps a clock reads.
var durationSteps = func() []float64 {
	var out []float64
	for e := -6; e < 1; e++ {
		p := math.Pow10(e) // the closest double to 10^e, as the literal is
		out = append(out, p, 2*p, 5*p)
	}
	return append(out, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 2*3600, 3*3600, 6*3600, 12*3600, 86400, 2*86400, 7*86400)
}()

// durationAxis is an axis of seconds up to at least maxV, labelled in the
// unit its step needs (µs, ms, s, min, h, d): every label differs from
// its neighbours, which the seconds with one decimal of issue 31's lag
// axis ("0.1s 0.1s 0.0s 0.0s") did not.
func durationAxis(maxV float64) Axis {
	if !(maxV > 0) {
		maxV = 1 // nothing to show: an axis of a second
	}
	step := durationSteps[len(durationSteps)-1]
	for _, s := range durationSteps {
		if s >= maxV/axisTicks {
			step = s
			break
		}
	}
	unit, per := "d", 86400.0
	switch {
	case step < 1e-3:
		unit, per = "µs", 1e-6
	case step < 1:
		unit, per = "ms", 1e-3
	case step < 60:
		unit, per = "s", 1
	case step < 3600:
		unit, per = "min", 60
	case step < 86400:
		unit, per = "h", 3600
	}
	return ticks(maxV, step, func(v float64) string { return trim(v/per, step/per) + " " + unit })
}

// countAxis is an axis of counts per second up to at least maxV, in
// thousands (k) or millions (M) from ten thousand on.
func countAxis(maxV float64) Axis {
	if !(maxV > 0) {
		maxV = 1
	}
	step := niceStep(maxV / axisTicks)
	unit, per := "", 1.0
	switch {
	case maxV >= 1e7:
		unit, per = "M", 1e6
	case maxV >= 1e4:
		unit, per = "k", 1e3
	}
	return ticks(maxV, step, func(v float64) string {
		if v == 0 {
			return "0"
		}
		return group(trim(v/per, step/per)) + unit
	})
}

// shareAxis is an axis of shares from 0 to 100%.
func shareAxis() Axis {
	return ticks(1, 0.25, func(v float64) string { return strconv.FormatFloat(100*v, 'f', 0, 64) + "%" })
}

// ticks cuts 0..maxV (rounded up to a step) at step.
func ticks(maxV, step float64, label func(float64) string) Axis {
	n := int(math.Ceil(maxV/step - 1e-9))
	a := Axis{Max: float64(n) * step}
	for i := 0; i <= n; i++ {
		v := float64(i) * step
		a.Ticks = append(a.Ticks, Tick{Value: v, Label: label(v)})
	}
	return a
}

// niceStep rounds a raw step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*p >= raw*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// trim prints v with as many decimals as step needs (step 0.5: one, 0.25:
// two, 20: none).
func trim(v, step float64) string {
	decimals := 0
	for d := step; decimals < 6 && math.Abs(d-math.Round(d)) > 1e-6*math.Max(1, d); d *= 10 {
		decimals++
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// group puts thousands separators into a number's integer part.
func group(s string) string {
	whole, frac, _ := strings.Cut(s, ".")
	if len(whole) <= 3 {
		return s
	}
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		fmt.Fprintf(&b, ".%s", frac)
	}
	return b.String()
}
