package federate

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/grmdp/grmdp/io/fileio"
	"github.com/grmdp/grmdp/traj"
)

// A site cache keeps a site's rows, as read and validated in its first
// round, so that its later rounds read only the two steps they need
// instead of its whole Parquet again. It lives at the site, beside its
// data (federate site --cache DIR), holds nothing its Parquet does not
// (the same rows, in step order, as plain little-endian arrays) and is
// used only while its key matches: the job id, the site, and every data
// file's path, size, modification time and SHA-256. Anything else (a data
// file changed, added or removed, another job, a damaged cache) reads the
// Parquet again and rebuilds it.

// CacheFormatVersion is the version of the site cache's file format.
const CacheFormatVersion = 1

// CacheFile is the name of a site's cache file in its cache directory.
const CacheFile = "site-rows.cache"

// cacheMagic starts every cache file.
var cacheMagic = []byte("GRMDPSC1")

// ErrCacheMiss says that a site's cache is absent or was built from
// something else than the data and job at hand.
var ErrCacheMiss = errors.New("federate: no site cache for these data and this job")

// CacheKey is what a site cache was built from.
type CacheKey struct {
	FormatVersion int         `json:"format_version"`
	JobID         string      `json:"job_id"`
	Site          string      `json:"site"`
	Files         []CacheData `json:"files"`
}

// CacheData identifies one data file of a site.
type CacheData struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mod_time_ns"`
	SHA256  string `json:"sha256"`
}

// NewCacheKey returns the key of a cache of site's rows of job jobID read
// from files (every file under the site's data arguments): each file's
// absolute path, size, modification time and SHA-256, in path order.
func NewCacheKey(jobID, site string, files []string) (CacheKey, error) {
	k := CacheKey{FormatVersion: CacheFormatVersion, JobID: jobID, Site: site}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return k, err
		}
		d, err := dataFile(abs)
		if err != nil {
			return k, err
		}
		k.Files = append(k.Files, d)
	}
	slices.SortFunc(k.Files, func(a, b CacheData) int {
		switch {
		case a.Path < b.Path:
			return -1
		case a.Path > b.Path:
			return 1
		}
		return 0
	})
	return k, nil
}

func dataFile(path string) (CacheData, error) {
	f, err := os.Open(path)
	if err != nil {
		return CacheData{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return CacheData{}, err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return CacheData{}, fmt.Errorf("%s: %w", path, err)
	}
	return CacheData{Path: path, Size: fi.Size(), ModTime: fi.ModTime().UnixNano(), SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// cacheHeader is the cache file's header: its key, the table's header and
// where each step's rows are.
type cacheHeader struct {
	Key   CacheKey    `json:"key"`
	Table cacheTable  `json:"table"`
	Steps []cacheStep `json:"steps"`
}

type cacheTable struct {
	Sites        []string         `json:"sites"`
	Trajectories []int            `json:"trajectories"`
	Actions      []string         `json:"actions"`
	A            int              `json:"a"`
	H            int              `json:"h"`
	W            int              `json:"w"`
	Sources      []traj.Source    `json:"sources"`
	Rows         int              `json:"rows"`
	ZeroStepFile string           `json:"zero_step_file"`
	Nulls        []traj.NullCount `json:"nulls"`
}

// cacheStep locates one step's block: Offset from the end of the header,
// Len bytes, Rows rows, with or without weights, and the block's SHA-256.
type cacheStep struct {
	Offset   int64  `json:"offset"`
	Len      int64  `json:"len"`
	Rows     int    `json:"rows"`
	Weighted bool   `json:"weighted"`
	SHA256   string `json:"sha256"`
}

// WriteCache writes t, the rows of the site and job of key, to
// DIR/[CacheFile], atomically and readable by its owner only. Each step is
// one block: SiteStart, Traj, Action, Next (int32), then Reward, State and
// Weight (float64), little-endian.
func WriteCache(dir string, key CacheKey, t *traj.Table) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	hdr := cacheHeader{Key: key, Table: cacheTable{Sites: t.Sites, Trajectories: t.Trajectories, Actions: t.Actions,
		A: t.A, H: t.H, W: t.W, Sources: t.Sources, Rows: t.Rows, ZeroStepFile: t.ZeroStepFile, Nulls: t.Nulls}}
	blocks := make([][]byte, len(t.Steps))
	var off int64
	for h := range t.Steps {
		b, err := encodeStep(&t.Steps[h])
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		s := &t.Steps[h]
		hdr.Steps = append(hdr.Steps, cacheStep{Offset: off, Len: int64(len(b)), Rows: s.Len(), Weighted: s.Weight != nil, SHA256: hex.EncodeToString(sum[:])})
		off += int64(len(b))
		blocks[h] = b
	}
	js, err := json.Marshal(hdr)
	if err != nil {
		return err
	}
	f, err := fileio.CreateAtomic(filepath.Join(dir, CacheFile))
	if err != nil {
		return err
	}
	defer f.Abort()
	w := bufio.NewWriter(f)
	w.Write(cacheMagic)
	binary.Write(w, binary.LittleEndian, uint64(len(js)))
	w.Write(js)
	for _, b := range blocks {
		w.Write(b)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	// The rows are the site's own: as private as its Parquet, or more.
	if err := os.Chmod(f.TempName(), 0o600); err != nil {
		return err
	}
	return f.Commit()
}

func encodeStep(s *traj.Step) ([]byte, error) {
	var buf bytes.Buffer
	for _, x := range []any{s.SiteStart, s.Traj, s.Action, s.Next, s.Reward, s.State} {
		if err := binary.Write(&buf, binary.LittleEndian, x); err != nil {
			return nil, err
		}
	}
	if s.Weight != nil {
		if err := binary.Write(&buf, binary.LittleEndian, s.Weight); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// ReadCache reads from DIR/[CacheFile] the table of the site and job of
// key, with the rows of steps lo..hi only (see [traj.Table.Window]; the
// other steps are empty). It returns an error wrapping [ErrCacheMiss] when
// the cache is absent, was built from other data or for another job or
// site, or is damaged (a step block whose SHA-256 does not match). It
// returns every step's number of rows beside the table (the site's totals
// need them; see [SiteInput]).
func ReadCache(dir string, key CacheKey, lo, hi int) (*traj.Table, []int, error) {
	f, err := os.Open(filepath.Join(dir, CacheFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, ErrCacheMiss
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	miss := func(why string) error { return fmt.Errorf("%w: %s", ErrCacheMiss, why) }
	var head [16]byte
	if _, err := io.ReadFull(f, head[:]); err != nil || !bytes.Equal(head[:8], cacheMagic) {
		return nil, nil, miss("not a site cache")
	}
	n := binary.LittleEndian.Uint64(head[8:])
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if n > uint64(fi.Size()) {
		return nil, nil, miss("truncated")
	}
	js := make([]byte, n)
	if _, err := io.ReadFull(f, js); err != nil {
		return nil, nil, miss("truncated")
	}
	var hdr cacheHeader
	if err := json.Unmarshal(js, &hdr); err != nil {
		return nil, nil, miss("unreadable header")
	}
	if !sameKey(hdr.Key, key) {
		return nil, nil, miss("built from other data or for another job")
	}
	ct := &hdr.Table
	if lo < 1 || hi < lo || hi > ct.H || len(hdr.Steps) != ct.H {
		return nil, nil, miss(fmt.Sprintf("no steps %d..%d among its %d", lo, hi, ct.H))
	}
	t := &traj.Table{Sites: ct.Sites, Trajectories: ct.Trajectories, Actions: ct.Actions, A: ct.A, H: ct.H, W: ct.W,
		Sources: ct.Sources, Rows: ct.Rows, ZeroStepFile: ct.ZeroStepFile, Nulls: ct.Nulls, Steps: make([]traj.Step, ct.H)}
	base := int64(16) + int64(n)
	for h := lo; h <= hi; h++ {
		cs := hdr.Steps[h-1]
		if cs.Offset < 0 || cs.Len < 0 || base+cs.Offset+cs.Len > fi.Size() {
			return nil, nil, miss("truncated")
		}
		b := make([]byte, cs.Len)
		if _, err := f.ReadAt(b, base+cs.Offset); err != nil {
			return nil, nil, miss("truncated")
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != cs.SHA256 {
			return nil, nil, miss(fmt.Sprintf("step %d's rows do not match their checksum", h))
		}
		s, err := decodeStep(b, len(ct.Sites), cs.Rows, ct.W, cs.Weighted)
		if err != nil {
			return nil, nil, miss(fmt.Sprintf("step %d: %v", h, err))
		}
		t.Steps[h-1] = s
	}
	stepRows := make([]int, ct.H)
	for h, cs := range hdr.Steps {
		stepRows[h] = cs.Rows
	}
	return t.Window(lo, hi), stepRows, nil
}

func decodeStep(b []byte, K, n, W int, weighted bool) (traj.Step, error) {
	s := traj.Step{SiteStart: make([]int32, K+1), Traj: make([]int32, n), Action: make([]int32, n), Next: make([]int32, n),
		Reward: make([]float64, n), State: make([]float64, n*W)}
	if weighted {
		s.Weight = make([]float64, n)
	}
	r := bytes.NewReader(b)
	for _, x := range []any{s.SiteStart, s.Traj, s.Action, s.Next, s.Reward, s.State} {
		if err := binary.Read(r, binary.LittleEndian, x); err != nil {
			return s, err
		}
	}
	if weighted {
		if err := binary.Read(r, binary.LittleEndian, s.Weight); err != nil {
			return s, err
		}
	}
	if r.Len() != 0 {
		return s, fmt.Errorf("%d bytes beyond its rows", r.Len())
	}
	return s, nil
}

func sameKey(a, b CacheKey) bool {
	return a.FormatVersion == b.FormatVersion && a.JobID == b.JobID && a.Site == b.Site && slices.Equal(a.Files, b.Files)
}

// RoundSteps returns the steps whose rows a site's part of round r reads:
// step h = H - r (its Gram, counts and right-hand side) and step h+1 (the
// values Vhat_{h+1} at the next states), or step H alone in round 0. A
// stationary job's regressions pool every step, and a round after the
// backward pass (no step h in 1..H) is not one of these, so they read all
// of 1..H.
func RoundSteps(j *Job, r int) (lo, hi int) {
	h := j.StepOf(r)
	if settingsOf(j).Stationary || h < 1 || h > j.H {
		return 1, j.H
	}
	return h, min(h+1, j.H)
}
