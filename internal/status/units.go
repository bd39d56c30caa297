package status

import "fmt"

// Plural says n of noun, as a person writes it: "1 transaction", "0
// transactions", "2 row changes" (the plural is noun+"s").
func Plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// bytesText prints a size in binary units, as the page's fmtBytes does:
// sizes are set in them (relay-max-bytes = 10737418240 is 10.00 GiB, which
// decimal units showed as 10.74 GB).
func bytesText(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
}
