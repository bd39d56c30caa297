package status

import (
	"embed"
	"io/fs"
	"net/http"
)

// web holds the status page: plain HTML, CSS and JavaScript, no build step
// and nothing fetched from elsewhere (the machines it runs on may be
// offline).
//
//go:embed web
var web embed.FS

func pageHandler() http.Handler {
	sub, err := fs.Sub(web, "web")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return http.FileServer(http.FS(sub))
}
