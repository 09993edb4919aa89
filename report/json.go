package report

import (
	"encoding/json"
	"io"

	"github.com/wymcp/wymcp-check/checks"
)

// The JSON report, version 1 (a public interface; fields are only ever
// added):
//
//	{"version":1, "tool":…, "target":…, "protocol":…, "contract":…, "started":…,
//	 "results":[{"fixture","check","area","severity","status","message","path"}],
//	 "summary":{"pass","fail","warn","skip","error","notes","durationMs","aborted"}}
//
// One result per finding for fail and warn, one per verdict otherwise.
type jsonSummary struct {
	Pass       int      `json:"pass"`
	Fail       int      `json:"fail"`
	Warn       int      `json:"warn"`
	Skip       int      `json:"skip"`
	Error      int      `json:"error"`
	Notes      []string `json:"notes,omitempty"`
	DurationMs int64    `json:"durationMs"`
	Aborted    string   `json:"aborted,omitempty"`
}

type jsonWriter struct {
	w     io.Writer
	first bool
	// Rows repeat: the check's own fields, its pass row and most skip
	// reasons are the same for every exchange, so their encoding is
	// cached. A transcript of a million exchanges then costs one string
	// encoding per exchange (the fixture) plus one per finding.
	checkPart map[*checks.Check][]byte
	reasons   map[string][]byte
	buf       []byte
}

func (j *jsonWriter) Begin(m Meta) error {
	head := struct {
		Version  int    `json:"version"`
		Tool     string `json:"tool"`
		ToolVer  string `json:"toolVersion"`
		Target   string `json:"target"`
		Protocol string `json:"protocol"`
		Contract string `json:"contract"`
		Started  string `json:"started"`
	}{1, m.Tool, m.Version, m.Target, m.Protocol, m.Contract, m.Started.UTC().Format("2006-01-02T15:04:05Z")}
	b, err := json.Marshal(head)
	if err != nil {
		return err
	}
	// Stream: open the object, leave it open for results.
	b = append(b[:len(b)-1], `,"results":[`...)
	j.first = true
	j.checkPart = map[*checks.Check][]byte{}
	j.reasons = map[string][]byte{}
	_, err = j.w.Write(b)
	return err
}

// maxCachedReasons bounds the reason cache: reasons that embed values
// (rare) must not grow it without end.
const maxCachedReasons = 1024

func (j *jsonWriter) str(s string, cache bool) []byte {
	if b, ok := j.reasons[s]; ok {
		return b
	}
	b, _ := json.Marshal(s) // a string always marshals
	if cache && len(j.reasons) < maxCachedReasons {
		j.reasons[s] = b
	}
	return b
}

func (j *jsonWriter) part(c *checks.Check) []byte {
	if b, ok := j.checkPart[c]; ok {
		return b
	}
	b, _ := json.Marshal(struct {
		Check    string `json:"check"`
		Area     string `json:"area"`
		Severity string `json:"severity"`
	}{c.ID, string(c.Area), string(c.Severity)})
	b = b[1 : len(b)-1] // the members alone
	j.checkPart[c] = b
	return b
}

func (j *jsonWriter) Exchange(fixture string, vs []checks.Verdict) error {
	fx := j.str(fixture, false)
	b := j.buf[:0]
	row := func(c *checks.Check, status string, msg []byte, path string) {
		if j.first {
			b, j.first = append(b, '\n'), false
		} else {
			b = append(b, ",\n"...)
		}
		b = append(b, `{"fixture":`...)
		b = append(b, fx...)
		b = append(b, ',')
		b = append(b, j.part(c)...)
		b = append(b, `,"status":"`...)
		b = append(b, status...)
		b = append(b, `","message":`...)
		b = append(b, msg...)
		if path != "" {
			b = append(b, `,"path":`...)
			b = append(b, j.str(path, false)...)
		}
		b = append(b, '}')
	}
	for _, v := range vs {
		switch v.Status {
		case checks.StatusFail, checks.StatusWarn:
			for _, f := range v.Findings {
				row(v.Check, string(f.Status), j.str(f.Message, false), f.Path)
			}
		case checks.StatusPass:
			row(v.Check, string(v.Status), j.str(v.Check.Title, true), "")
		default:
			row(v.Check, string(v.Status), j.str(v.Reason, true), "")
		}
	}
	j.buf = b
	_, err := j.w.Write(b)
	return err
}

func (j *jsonWriter) End(s Summary) error {
	b, err := json.Marshal(jsonSummary{s.Pass, s.Fail, s.Warn, s.Skip, s.Error, s.Notes, s.Duration.Milliseconds(), s.Aborted})
	if err != nil {
		return err
	}
	_, err = io.WriteString(j.w, "\n],\n\"summary\":"+string(b)+"}\n")
	return err
}
