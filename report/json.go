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
//	 "summary":{"pass","fail","warn","skip","error","notes","durationMs"}}
//
// One result per finding for fail and warn, one per verdict otherwise.
type jsonResult struct {
	Fixture  string `json:"fixture"`
	Check    string `json:"check"`
	Area     string `json:"area"`
	Severity string `json:"severity"`
	Status   string `json:"status"`
	Message  string `json:"message"`
	Path     string `json:"path,omitempty"`
}

type jsonSummary struct {
	Pass       int      `json:"pass"`
	Fail       int      `json:"fail"`
	Warn       int      `json:"warn"`
	Skip       int      `json:"skip"`
	Error      int      `json:"error"`
	Notes      []string `json:"notes,omitempty"`
	DurationMs int64    `json:"durationMs"`
}

type jsonWriter struct {
	w     io.Writer
	first bool
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
	_, err = j.w.Write(b)
	return err
}

func (j *jsonWriter) Exchange(fixture string, vs []checks.Verdict) error {
	for _, v := range vs {
		base := jsonResult{Fixture: fixture, Check: v.Check.ID, Area: string(v.Check.Area), Severity: string(v.Check.Severity), Status: string(v.Status)}
		switch v.Status {
		case checks.StatusFail, checks.StatusWarn:
			for _, f := range v.Findings {
				r := base
				r.Status, r.Message, r.Path = string(f.Status), f.Message, f.Path
				if err := j.put(r); err != nil {
					return err
				}
			}
		default:
			r := base
			r.Message = v.Reason
			if v.Status == checks.StatusPass {
				r.Message = v.Check.Title
			}
			if err := j.put(r); err != nil {
				return err
			}
		}
	}
	return nil
}

func (j *jsonWriter) put(r jsonResult) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	sep := ",\n"
	if j.first {
		sep, j.first = "\n", false
	}
	if _, err := io.WriteString(j.w, sep); err != nil {
		return err
	}
	_, err = j.w.Write(b)
	return err
}

func (j *jsonWriter) End(s Summary) error {
	b, err := json.Marshal(jsonSummary{s.Pass, s.Fail, s.Warn, s.Skip, s.Error, s.Notes, s.Duration.Milliseconds()})
	if err != nil {
		return err
	}
	_, err = io.WriteString(j.w, "\n],\n\"summary\":"+string(b)+"}\n")
	return err
}
