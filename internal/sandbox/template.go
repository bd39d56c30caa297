package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// templateOK is the marker file that a complete template contains. It is
// written last, before the rename.
const templateOK = "template-ok"

// templateFiles must exist in a usable template datadir. They are checked
// because tmp cleaners (systemd-tmpfiles) may delete old files inside an old
// directory.
var templateFiles = []string{
	templateOK,
	"data/ibdata1",
	"data/ib_logfile0",
	"data/aria_log_control",
	"data/mysql/global_priv.frm",
}

// templateSQL runs at the end of mariadb-install-db. The sys schema is only
// views and routines over performance_schema, which is off. It makes up 104
// of the datadir's 198 files, and file creation is most of what copying the
// template costs (about 0.5 ms per file on the ext4 here).
const templateSQL = "DROP DATABASE IF EXISTS sys;\n"

// installArgs returns the mariadb-install-db command line for datadir.
// extraFile holds templateSQL.
func installArgs(datadir, extraFile string) []string {
	args := []string{
		"--no-defaults", // must be first, as for mariadbd
		"--datadir=" + datadir,
		"--extra-file=" + extraFile,
		"--auth-root-authentication-method=normal", // root@localhost without unix_socket auth
		"--skip-test-db",
		// Meant for datadirs built on one host and used on another, which is
		// what a template is. It leaves out root@<hostname>, which servers
		// with --skip-name-resolve warn about, and it skips resolveip.
		"--cross-bootstrap",
		"--innodb-log-file-size=" + innodbLogFileSize,
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	return args
}

// templateCache holds the template directory of this process. mu is held
// while the template is found or built, so concurrent Starts wait for one
// build.
var templateCache struct {
	mu  sync.Mutex
	dir string // "" until found or built
}

// templateDataDir returns the datadir to copy for a new server. On first use
// in a process it finds the template of the installed mariadbd on disk, or
// builds it.
func templateDataDir(ctx context.Context) (string, error) {
	templateCache.mu.Lock()
	defer templateCache.mu.Unlock()
	if templateCache.dir == "" {
		dir, err := findOrBuildTemplate(ctx, os.TempDir())
		if err != nil {
			return "", err
		}
		templateCache.dir = dir
	}
	return filepath.Join(templateCache.dir, "data"), nil
}

// findOrBuildTemplate returns parent/paraply-template-<key>, building it
// first if it is missing or incomplete. Other processes may do the same at
// the same time.
func findOrBuildTemplate(ctx context.Context, parent string) (string, error) {
	version, err := exec.CommandContext(ctx, binary("mariadbd"), "--version").Output()
	if err != nil {
		return "", fmt.Errorf("sandbox: %s --version: %w", binary("mariadbd"), err)
	}
	key := strings.Join(append(installArgs("", ""), string(version), templateSQL), "\x00")
	sum := sha256.Sum256([]byte(key))
	final := filepath.Join(parent, "paraply-template-"+hex.EncodeToString(sum[:6]))

	if templateComplete(final) {
		return final, nil
	}
	if _, err := os.Stat(final); err == nil {
		// Incomplete, so something deleted part of it. Move it aside first so
		// that no other process starts to copy it.
		if trash, err := os.MkdirTemp(filepath.Dir(final), filepath.Base(final)+".stale-"); err == nil {
			_ = os.Rename(final, filepath.Join(trash, "template"))
			_ = os.RemoveAll(trash)
		}
	}

	tmp, err := os.MkdirTemp(filepath.Dir(final), filepath.Base(final)+".tmp-")
	if err != nil {
		return "", fmt.Errorf("sandbox: template: %w", err)
	}
	defer os.RemoveAll(tmp) // no-op after a successful rename
	if err := installTemplate(ctx, tmp); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		// Another process renamed its template into place first.
		if templateComplete(final) {
			return final, nil
		}
		return "", fmt.Errorf("sandbox: template: %w", err)
	}
	return final, nil
}

// installTemplate runs mariadb-install-db into dir/install, makes a sparse
// copy of it in dir/data (see copyFile) and then writes the marker file.
func installTemplate(ctx context.Context, dir string) error {
	installed := filepath.Join(dir, "install")
	extraFile := filepath.Join(dir, "template.sql")
	if err := os.WriteFile(extraFile, []byte(templateSQL), 0o644); err != nil {
		return fmt.Errorf("sandbox: template: %w", err)
	}
	// The bootstrap server keeps temporary tables in its tmpdir; /tmp is
	// shared with whatever else runs on the machine, so use a private one.
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("sandbox: template: %w", err)
	}
	args := append(installArgs(installed, extraFile), "--tmpdir="+tmp)
	cmd := exec.CommandContext(ctx, binary("mariadb-install-db"), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("sandbox: mariadb-install-db into %s: %w\n%s", installed, err, firstLines(string(out), 25))
	}
	// Servers start with --innodb-buffer-pool-load-at-startup=OFF, so this
	// list of the install run's pages is never read.
	_ = os.Remove(filepath.Join(installed, "ib_buffer_pool"))
	if err := copyTree(installed, filepath.Join(dir, "data"), true); err != nil {
		return fmt.Errorf("sandbox: template: %w", err)
	}
	if err := os.RemoveAll(installed); err != nil {
		return fmt.Errorf("sandbox: template: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, templateOK), nil, 0o644)
}

func templateComplete(dir string) bool {
	for _, f := range templateFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return false
		}
	}
	return true
}

// CopyTree copies the regular files and directories under src to dst,
// which must not exist, keeping holes of sparse files (see copyFile): how
// benchmarks snapshot and restore a stopped server's directories.
func CopyTree(src, dst string) error { return copyTree(src, dst, false) }

// copyTree copies the regular files and directories under src to dst, which
// must not exist, with copyFile.
func copyTree(src, dst string, skipZeros bool) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(target, 0o700)
		case d.Type().IsRegular():
			return copyFile(path, target, skipZeros)
		default:
			return fmt.Errorf("unexpected file type %v at %s", d.Type(), path)
		}
	})
}

// lseek whence values for sparse files (Linux).
const (
	seekData = 3 // SEEK_DATA
	seekHole = 4 // SEEK_HOLE
)

// copyFile copies the regular file src to dst, which must not exist. Only
// the data segments of src are copied (found with SEEK_DATA and SEEK_HOLE),
// so holes stay holes. With skipZeros, all-zero blocks also become holes.
//
// The template is made sparse this way once: about 7 MB of its 84 MB are not
// zeros (most of the rest is the 64 MB redo log). Then each Start copies
// only those 7 MB.
func copyFile(src, dst string, skipZeros bool) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	size := fi.Size()
	for off := int64(0); off < size; {
		start, end := nextData(in, off, size)
		if start >= size {
			break
		}
		if err := copyRange(in, out, start, end, skipZeros); err != nil {
			return err
		}
		off = end
	}
	return out.Truncate(size) // a trailing hole
}

// nextData returns the first data segment [start, end) of f at or after off,
// or start == size if only a hole is left. On a filesystem without SEEK_DATA
// everything is data.
func nextData(f *os.File, off, size int64) (start, end int64) {
	start, err := f.Seek(off, seekData)
	if errors.Is(err, syscall.ENXIO) {
		return size, size
	}
	if err != nil {
		return off, size
	}
	end, err = f.Seek(start, seekHole)
	if err != nil {
		return start, size
	}
	return start, end
}

// copyRange copies bytes [start, end) of in to the same offsets of out.
func copyRange(in, out *os.File, start, end int64, skipZeros bool) error {
	if !skipZeros {
		if _, err := in.Seek(start, io.SeekStart); err != nil {
			return err
		}
		if _, err := out.Seek(start, io.SeekStart); err != nil {
			return err
		}
		// *os.File.ReadFrom turns this into copy_file_range, so the data
		// stays in the kernel (or is reflinked where the filesystem can).
		_, err := io.Copy(out, io.LimitReader(in, end-start))
		return err
	}
	var block, zeros [4096]byte
	for off := start; off < end; off += int64(len(block)) {
		b := block[:min(int64(len(block)), end-off)]
		if _, err := in.ReadAt(b, off); err != nil {
			return err
		}
		if !bytes.Equal(b, zeros[:len(b)]) {
			if _, err := out.WriteAt(b, off); err != nil {
				return err
			}
		}
	}
	return nil
}
