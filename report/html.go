package report

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/rules"
)

// htmlWriter writes one self-contained page: inline CSS and script, no
// external asset, readable offline and without script. Exchanges stream
// into the page as they are judged; the summary (verdict, counts, the
// rollup per check) is written last and shown first (CSS order), so the
// page needs no second pass. Each exchange that found something shows
// its request and reply, the lines a finding is about highlighted. The
// script adds filters by area and status, kept in the URL fragment
// (#status=fail,warn&area=code) so a view can be shared.
type htmlWriter struct {
	w     io.Writer
	meta  Meta
	roll  rollup
	cited map[string]bool
	total int
	// buf holds one exchange's markup, its memory kept for the next: a
	// page of a long transcript is written exchange by exchange.
	buf bytes.Buffer
}

// htmlClip bounds each body shown: a flood must not make a page no
// browser opens.
const htmlClip = 64 << 10

func esc(s string) string { return html.EscapeString(Sanitize(s)) }

func (h *htmlWriter) Begin(m Meta) error {
	h.meta = m
	h.cited = map[string]bool{}
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>%s: %s</title>\n<style>%s</style>\n</head>\n<body>\n<main id=\"report\">\n",
		esc(m.Tool), esc(m.Target), htmlCSS)
	fmt.Fprintf(&b, "<header id=\"meta\"><h1>%s <small>%s</small></h1>\n<dl>", esc(m.Tool), esc(m.Version))
	for _, kv := range [][2]string{{"target", m.Target}, {"protocol", m.Protocol}, {"contract", m.Contract}, {"baseline", m.Baseline}, {"started", m.Started.UTC().Format("2006-01-02 15:04:05 UTC")}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, "<div><dt>%s</dt><dd>%s</dd></div>", kv[0], esc(kv[1]))
		}
	}
	b.WriteString("</dl></header>\n")
	b.WriteString("<form id=\"filters\" hidden><fieldset><legend>status</legend>")
	for _, st := range []string{"fail", "error", "warn", "known", "pass", "skip"} {
		checked := " checked"
		if st == "pass" || st == "skip" {
			checked = ""
		}
		fmt.Fprintf(&b, "<label class=\"st-%s\"><input type=\"checkbox\" name=\"status\" value=\"%s\"%s> %s</label>", st, st, checked, st)
	}
	b.WriteString("</fieldset><fieldset><legend>area</legend>")
	for _, a := range checks.Areas() {
		fmt.Fprintf(&b, "<label><input type=\"checkbox\" name=\"area\" value=\"%s\" checked> %s</label>", a, a)
	}
	b.WriteString("</fieldset><p id=\"shown\"></p></form>\n<section id=\"exchanges\">\n<h2>Exchanges</h2>\n")
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *htmlWriter) Exchange(r *Result) error {
	h.roll.add(r, h.meta.FailOnWarn)
	h.total++
	c := countExchange(r)
	label := c.label()
	status := strings.ToLower(label)
	if status == "ok" {
		status = "pass"
	}
	b := &h.buf
	b.Reset()
	fmt.Fprintf(b, "<article class=\"fx\" id=\"x%d\" data-status=\"%s\">\n<h3><span class=\"badge st-%s\">%s</span> <span class=\"fxname\">%s</span>",
		h.roll.n, status, status, label, esc(r.Fixture))
	if r.Line > 0 {
		fmt.Fprintf(b, " <span class=\"loc\">%s:%d</span>", esc(r.File), r.Line)
	}
	fmt.Fprintf(b, " <span class=\"counts\">%s</span>", esc(c.counts(true)))
	if r.Timed {
		fmt.Fprintf(b, " <span class=\"dur\">%s ms</span>", strconv.FormatFloat(float64(r.Duration.Microseconds())/1000, 'f', 1, 64))
	}
	b.WriteString("</h3>\n")
	interesting := c.Fail+c.Warn+c.Error > 0
	if interesting || h.meta.Verbose {
		h.verdicts(b, r)
	}
	if interesting && r.Exchange != nil {
		h.wire(b, r)
	}
	b.WriteString("</article>\n")
	_, err := h.w.Write(b.Bytes())
	if b.Cap() > 4*htmlClip {
		h.buf = bytes.Buffer{} // one flood's room is not kept for the run
	}
	return err
}

// verdicts lists every verdict of an exchange, findings first; the
// filters act on each line.
func (h *htmlWriter) verdicts(b *bytes.Buffer, r *Result) {
	b.WriteString("<ul class=\"verdicts\">\n")
	sc := scopeOf(r)
	order := []checks.Status{checks.StatusFail, checks.StatusError, checks.StatusWarn, checks.StatusPass, checks.StatusSkip}
	for _, want := range order {
		for _, v := range r.Verdicts {
			if v.Status != want {
				continue
			}
			reason, known := r.Known[v.Check.ID]
			item := func(f checks.Finding) {
				st, path, msg := f.Status, f.Path, f.Message
				status := string(st)
				if known {
					status = "known"
				}
				fmt.Fprintf(b, "<li class=\"v\" data-area=\"%s\" data-status=\"%s\"><span class=\"st st-%s\">%s</span> <a class=\"check\" href=\"#check-%s\" title=\"%s\">%s</a>",
					v.Check.Area, status, status, status, v.Check.ID, esc(v.Check.Title), v.Check.ID)
				if path != "" {
					fmt.Fprintf(b, " <code class=\"path\">%s</code>", esc(path))
				}
				fmt.Fprintf(b, " <span class=\"msg\">%s</span>", esc(msg))
				if st == checks.StatusFail || st == checks.StatusWarn || st == checks.StatusError {
					h.ruleLinks(b, v.Check, f, sc)
				}
				if known {
					fmt.Fprintf(b, " <span class=\"knownwhy\">known: %s</span>", esc(reason))
				}
				b.WriteString("</li>\n")
			}
			switch v.Status {
			case checks.StatusFail, checks.StatusWarn:
				for _, f := range v.Findings {
					item(f)
				}
			case checks.StatusPass:
				item(checks.Finding{Status: v.Status, Message: v.Check.Title})
			default:
				item(checks.Finding{Status: v.Status, Message: v.Reason})
			}
		}
	}
	b.WriteString("</ul>\n")
}

func (h *htmlWriter) ruleLinks(b *bytes.Buffer, c *checks.Check, f checks.Finding, sc scope) {
	ids := findingRules(c, f, sc)
	if len(ids) == 0 {
		return
	}
	b.WriteString(" <span class=\"rules\">")
	for i, id := range ids {
		if i > 0 {
			b.WriteString(" ")
		}
		h.cited[id] = true
		title := ""
		if r := rules.Lookup(id); r != nil {
			title = r.Level + ": " + r.Title
		}
		fmt.Fprintf(b, "<a href=\"#rule-%s\" title=\"%s\">%s</a>", id, esc(title), id)
	}
	b.WriteString("</span>")
}

// statusKnown marks, in the page, a finding the baseline knows.
const statusKnown checks.Status = "known"

// A wline is one line of a request or reply shown in the page, with the
// path of the member it shows and the findings placed on it.
type wline struct {
	path  string
	text  string
	notes []checks.Finding
	ids   []string
}

// wire shows the request and the reply, each finding on the line of the
// member its path names (or the nearest enclosing one).
func (h *htmlWriter) wire(b *bytes.Buffer, r *Result) {
	ex := r.Exchange
	b.WriteString("<div class=\"wire\">\n<figure class=\"req\"><figcaption>request</figcaption><pre>")
	var req []wline
	if ex.Transport == envelope.HTTP {
		req = append(req, wline{text: ex.Request.HTTPMethod()})
		req = append(req, headerLines(ex.Request.Header, "")...)
		req = append(req, wline{})
	}
	req = append(req, bodyLines(ex.Request.Body, "")...)
	writeLines(b, req)
	b.WriteString("</pre></figure>\n<figure class=\"rep\"><figcaption>reply</figcaption><pre>")
	var rep []wline
	var unplaced []wline
	if ex.Response == nil {
		rep = append(rep, wline{path: "reply", text: "(no reply: " + orDefault(ex.Failure, "nothing came back") + ")"})
	} else {
		if ex.Transport == envelope.HTTP {
			rep = append(rep, wline{path: "http.status", text: "HTTP " + strconv.Itoa(ex.Response.Status)})
			rep = append(rep, headerLines(ex.Response.Header, "http.header.")...)
			rep = append(rep, wline{})
		}
		if ex.Failure != "" {
			rep = append(rep, wline{text: "(incomplete: " + ex.Failure + ")"})
		}
		// Split the reply as the judge did (the same expectation).
		reply := r.Reply()
		if len(reply.Messages) == 0 {
			rep = append(rep, wline{path: "reply", text: string(clip(ex.Response.Body))})
		}
		for i := range reply.Messages {
			m := &reply.Messages[i]
			prefix := "messages[" + strconv.Itoa(i) + "]"
			if m == reply.Response {
				prefix = ""
			}
			lines := bodyLines(m.Raw, prefix)
			// The message's first line also answers for the whole message.
			lines = append([]wline{{path: "messages[" + strconv.Itoa(i) + "]"}}, lines...)
			if m == reply.Response {
				lines[0].path = "reply"
			}
			rep = append(rep, lines...)
		}
	}
	byPath := map[string]int{}
	for i, l := range rep {
		if l.path == "" && i > 0 {
			continue
		}
		key := l.path
		if strings.HasPrefix(key, "http.header.") {
			key = strings.ToLower(key)
		}
		if _, seen := byPath[key]; !seen {
			byPath[key] = i
		}
	}
	for _, v := range r.Verdicts {
		_, known := r.Known[v.Check.ID]
		for _, f := range v.Findings {
			if known {
				f.Status = statusKnown
			}
			i, ok := placeLine(f.Path, byPath)
			if !ok {
				unplaced = append(unplaced, wline{text: f.Path, notes: []checks.Finding{f}, ids: []string{v.Check.ID}})
				continue
			}
			rep[i].notes = append(rep[i].notes, f)
			rep[i].ids = append(rep[i].ids, v.Check.ID)
		}
	}
	// Marker lines that hold no text are only anchors: drop the empty ones.
	kept := rep[:0]
	for _, l := range rep {
		if (l.path == "reply" || strings.HasPrefix(l.path, "messages[")) && l.text == "" && len(l.notes) == 0 && !strings.Contains(l.path, ".") {
			continue
		}
		kept = append(kept, l)
	}
	writeLines(b, kept)
	b.WriteString("</pre>")
	if len(unplaced) > 0 {
		b.WriteString("<ul class=\"unplaced\">")
		for _, l := range unplaced {
			for i, f := range l.notes {
				fmt.Fprintf(b, "<li class=\"hl st-%s\">%s %s %s: %s</li>", f.Status, f.Status, l.ids[i], esc(l.text), esc(f.Message))
			}
		}
		b.WriteString("</ul>")
	}
	b.WriteString("</figure>\n</div>\n")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// placeLine finds the line of a finding's path, walking up to its
// nearest shown ancestor.
func placeLine(path string, byPath map[string]int) (int, bool) {
	if strings.HasPrefix(path, "http.header.") {
		i, ok := byPath[strings.ToLower(path)]
		return i, ok
	}
	if path == "" {
		path = "reply"
	}
	for {
		if i, ok := byPath[path]; ok {
			return i, true
		}
		cut := strings.LastIndexByte(path, '.')
		if cut < 0 {
			if strings.HasPrefix(path, "http.") || path == "server" {
				return 0, false
			}
			i, ok := byPath["reply"]
			return i, ok
		}
		path = path[:cut]
	}
}

func headerLines(h http.Header, prefix string) []wline {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []wline
	for _, k := range keys {
		for _, v := range h[k] {
			out = append(out, wline{path: prefix + http.CanonicalHeaderKey(k), text: k + ": " + string(clip([]byte(v)))})
		}
	}
	return out
}

// bodyLines lays out a body: JSON one member a line, anything else as
// its lines of text.
func bodyLines(raw []byte, prefix string) []wline {
	raw = clip(raw)
	var out []wline
	if !envelope.TooDeep(raw) && gjson.ValidBytes(raw) {
		for _, l := range prettyLines(gjson.ParseBytes(raw), "", "", nil, true) {
			out = append(out, wline{path: joinPrefix(prefix, l.path), text: l.text})
		}
		return out
	}
	for _, l := range strings.Split(string(raw), "\n") {
		out = append(out, wline{path: prefix, text: l})
	}
	return out
}

func joinPrefix(prefix, path string) string {
	switch {
	case prefix == "":
		return path
	case path == "":
		return prefix
	}
	return prefix + "." + path
}

func clip(b []byte) []byte {
	if len(b) > htmlClip {
		return append(b[:htmlClip:htmlClip], "… (cut)"...)
	}
	return b
}

// lineClip bounds a line as shown: a 4 KB canary must not push the
// finding about it out of view.
const lineClip = 240

func clipLine(s string) string {
	r := []rune(s)
	if len(r) <= lineClip {
		return s
	}
	return string(r[:lineClip]) + fmt.Sprintf("…[+%d characters]", len(r)-lineClip)
}

func writeLines(b *bytes.Buffer, ls []wline) {
	for _, l := range ls {
		l.text = clipLine(l.text)
		if len(l.notes) == 0 {
			b.WriteString(esc(l.text))
			b.WriteString("\n")
			continue
		}
		worst := statusKnown
		for _, f := range l.notes {
			if f.Status == checks.StatusFail || f.Status == checks.StatusWarn && worst == statusKnown {
				worst = f.Status
			}
		}
		fmt.Fprintf(b, "<mark class=\"hl st-%s\" data-path=\"%s\">%s", worst, esc(l.path), esc(l.text))
		for i, f := range l.notes {
			fmt.Fprintf(b, "<span class=\"note st-%s\">↑ %s %s: %s</span>", f.Status, f.Status, l.ids[i], esc(f.Message))
		}
		// The mark is a block: a newline after it would show as an empty line.
		b.WriteString("</mark>")
	}
}

func (h *htmlWriter) End(s Summary) error {
	var b strings.Builder
	b.WriteString("</section>\n")
	word := s.verdictWord(h.meta.FailOnWarn)
	fmt.Fprintf(&b, "<section id=\"summary\">\n<p id=\"verdict\" class=\"verdict %s\">%s</p>\n", strings.ToLower(word), word)
	if s.Aborted != "" {
		fmt.Fprintf(&b, "<p class=\"aborted\">Not judged: %s</p>\n", esc(s.Aborted))
	}
	if s.Interrupted != "" {
		fmt.Fprintf(&b, "<p class=\"aborted\">Interrupted: %s</p>\n", esc(s.Interrupted))
	}
	if s.Invalid != "" {
		fmt.Fprintf(&b, "<p class=\"aborted\">Input problems: %s</p>\n", esc(s.Invalid))
	}
	b.WriteString("<dl class=\"totals\">")
	for _, kv := range []struct {
		k string
		n int
	}{{"pass", s.Pass}, {"fail", s.Fail}, {"warn", s.Warn}, {"error", s.Error}, {"skip", s.Skip}, {"known", s.Known}, {"stale", len(s.Stale)}} {
		fmt.Fprintf(&b, "<div class=\"st-%s\"><dt>%s</dt><dd id=\"count-%s\">%d</dd></div>", kv.k, kv.k, kv.k, kv.n)
	}
	b.WriteString("</dl>\n<p class=\"runfacts\">")
	fmt.Fprintf(&b, "%d exchange(s) in %s", h.total, esc(s.Duration.Round(1e6).String()))
	if s.Protocol != "" {
		fmt.Fprintf(&b, " · protocol <strong>%s</strong> (%s)", esc(s.Protocol), esc(s.Negotiation))
	}
	b.WriteString("</p>\n")
	if e := h.roll.errored(); e != nil {
		fmt.Fprintf(&b, "<p id=\"errored\" class=\"st-error\">Could not judge %d %s", e.fail+e.known, h.roll.unit(e.fail+e.known))
		if e.known > 0 {
			fmt.Fprintf(&b, " (%d known)", e.known)
		}
		fmt.Fprintf(&b, "; first <a href=\"#x%d\">%s</a>: %s</p>\n", e.first.seq, esc(e.first.fixture), esc(e.first.message))
	}
	if rolls := h.roll.sorted(); len(rolls) > 0 {
		b.WriteString("<h2>By check</h2>\n<table id=\"rollup\"><thead><tr><th>check</th><th>area</th><th>fails</th><th>warns</th><th>known</th><th>first finding</th><th>rules</th></tr></thead><tbody>\n")
		for _, c := range rolls {
			fmt.Fprintf(&b, "<tr id=\"check-%s\" data-area=\"%s\"><td><strong>%s</strong> %s</td><td>%s</td><td>%d</td><td>%d</td><td>%d</td><td><a href=\"#x%d\">%s</a>",
				c.check.ID, c.check.Area, c.check.ID, esc(c.check.Title), c.check.Area, c.fail, c.warn, c.known, c.first.seq, esc(c.first.fixture))
			if c.first.path != "" {
				fmt.Fprintf(&b, " <code class=\"path\">%s</code>", esc(c.first.path))
			}
			fmt.Fprintf(&b, " %s</td><td>", esc(c.first.message))
			var rb bytes.Buffer
			h.ruleLinks(&rb, c.check, c.first.finding(), c.first.scope)
			if rb.Len() == 0 {
				rb.WriteString(esc(c.check.SpecRef)) // the contract's own clauses
			}
			b.WriteString(rb.String())
			b.WriteString("</td></tr>\n")
		}
		b.WriteString("</tbody></table>\n")
	}
	if c := s.Coverage; c != nil {
		writeHTMLCoverage(&b, c)
	}
	if len(s.Stale) > 0 {
		b.WriteString("<h2>Stale baseline entries</h2>\n<p>These no longer fail: remove them from the baseline.</p>\n<ul id=\"stale\">")
		for _, e := range s.Stale {
			fmt.Fprintf(&b, "<li><span class=\"fxname\">%s</span> %s <span class=\"msg\">%s</span></li>", esc(e.Fixture), esc(e.Check), esc(e.Reason))
		}
		b.WriteString("</ul>\n")
	}
	if len(s.Notes) > 0 {
		b.WriteString("<h2>Notes</h2>\n<ul id=\"notes\">")
		for _, n := range s.Notes {
			fmt.Fprintf(&b, "<li>%s</li>", esc(n))
		}
		b.WriteString("</ul>\n")
	}
	b.WriteString("</section>\n")
	if len(h.cited) > 0 {
		b.WriteString("<section id=\"rules\">\n<h2>Rules cited</h2>\n<dl>")
		for _, r := range rules.All() {
			if !h.cited[r.ID] {
				continue
			}
			fmt.Fprintf(&b, "<dt id=\"rule-%s\">%s <span class=\"level\">%s</span> %s</dt><dd>%s <small>(%s; digest %s)</small></dd>\n",
				r.ID, r.ID, esc(r.Level), esc(r.Title), esc(r.Text), esc(r.Versions), esc(r.Section))
		}
		b.WriteString("</dl>\n</section>\n")
	}
	fmt.Fprintf(&b, "</main>\n<script>%s</script>\n</body>\n</html>\n", htmlJS)
	_, err := io.WriteString(h.w, b.String())
	return err
}

const htmlCSS = `
:root{--fail:#c62828;--error:#8e24aa;--warn:#b26a00;--known:#5d6d7e;--pass:#2e7d32;--skip:#777;--bg:#fafafa;--line:#ddd}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:#222}
main{display:flex;flex-direction:column;max-width:1200px;margin:0 auto;padding:1rem}
#meta{order:-3}#summary{order:-2}#filters{order:-1}
h1{font-size:1.3rem;margin:.2rem 0}h1 small{color:#666;font-weight:normal}
h2{font-size:1.1rem;margin:1.2rem 0 .5rem}h3{font-size:1rem;margin:0;font-weight:normal}
#meta dl{display:flex;flex-wrap:wrap;gap:.2rem 1.5rem;margin:.3rem 0}#meta dt{color:#666;display:inline}#meta dt::after{content:": "}#meta dd{display:inline;margin:0}
.verdict{font-size:1.6rem;font-weight:700;margin:.6rem 0;padding:.4rem .8rem;border-radius:6px;color:#fff;display:inline-block}
.verdict.passed{background:var(--pass)}.verdict.failed{background:var(--fail)}.verdict.aborted,.verdict.interrupted,.verdict.invalid{background:var(--error)}
.totals{display:flex;gap:.6rem;margin:.4rem 0}.totals div{background:#fff;border:1px solid var(--line);border-radius:6px;padding:.3rem .8rem;text-align:center}
.totals dt{font-size:.8rem;color:#666}.totals dd{margin:0;font-size:1.3rem;font-weight:600}
table{border-collapse:collapse;width:100%;background:#fff}th,td{border:1px solid var(--line);padding:.25rem .5rem;text-align:left;vertical-align:top}
#filters{display:flex;flex-wrap:wrap;gap:1rem;align-items:center;background:#fff;border:1px solid var(--line);border-radius:6px;padding:.4rem .8rem;margin:.8rem 0;position:sticky;top:0;z-index:1}
#filters fieldset{border:0;margin:0;padding:0}#filters legend{font-weight:600;float:left;margin-right:.5rem}#filters label{margin-right:.6rem;white-space:nowrap}#shown{margin:0;color:#666}
.fx{background:#fff;border:1px solid var(--line);border-left:5px solid var(--line);border-radius:6px;padding:.4rem .7rem;margin:.35rem 0}
.fx[data-status=fail]{border-left-color:var(--fail)}.fx[data-status=error]{border-left-color:var(--error)}.fx[data-status=warn]{border-left-color:var(--warn)}.fx[data-status=known]{border-left-color:var(--known)}.fx[data-status=pass]{border-left-color:var(--pass)}
.badge{font-weight:700;font-size:.8rem;padding:.05rem .4rem;border-radius:4px;color:#fff!important;background:var(--pass)}
.badge.st-fail{background:var(--fail)}.badge.st-error{background:var(--error)}.badge.st-warn{background:var(--warn)}.badge.st-known{background:var(--known)}
.fxname{font-family:ui-monospace,Menlo,Consolas,monospace;font-weight:600}.counts,.dur,.loc{color:#666;font-size:.85rem}
.verdicts{list-style:none;padding:0;margin:.3rem 0}.v{padding:.1rem 0}
.st{display:inline-block;min-width:3.2rem;font-size:.8rem;font-weight:600}.st-fail{color:var(--fail)}.st-error{color:var(--error)}.st-warn{color:var(--warn)}.st-known{color:var(--known)}.st-pass{color:var(--pass)}.st-skip{color:var(--skip)}
.check{font-family:ui-monospace,Menlo,Consolas,monospace;color:inherit}.path{background:#f0f0f0;padding:0 .2rem;border-radius:3px}
.rules a{font-size:.8rem;margin-left:.2rem;color:#1565c0}.knownwhy{color:var(--known);font-style:italic}
.wire{display:grid;grid-template-columns:1fr 1fr;gap:.6rem}@media (max-width:800px){.wire{grid-template-columns:1fr}}
figure{margin:0;min-width:0}figcaption{font-size:.8rem;color:#666}
pre{margin:0;background:#f6f8fa;border:1px solid var(--line);border-radius:4px;padding:.4rem;overflow:auto;max-height:30rem;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;overflow-wrap:anywhere}
mark.hl{display:block;background:#fde2e1;color:inherit}mark.hl.st-warn{background:#fff3cd}mark.hl.st-known{background:#e8ecef}.note{display:block;font-weight:600;font-family:system-ui,sans-serif}
.unplaced{list-style:none;padding:0;margin:.3rem 0;font-size:.85rem}
#rules dt{font-weight:600;margin-top:.4rem}#rules .level{font-size:.75rem;background:#eee;border-radius:3px;padding:0 .3rem}#rules dd{margin:0 0 0 1rem}
[hidden]{display:none!important}
`

const htmlJS = `
(function(){
  var form=document.getElementById('filters');
  form.hidden=false;
  var boxes=form.querySelectorAll('input');
  function chosen(name){var s={};form.querySelectorAll('input[name='+name+']:checked').forEach(function(i){s[i.value]=1});return s}
  function fromHash(){
    var h=location.hash.replace(/^#/,'');if(!/(^|&)(status|area)=/.test(h))return;
    h.split('&').forEach(function(kv){var p=kv.split('=');if(p.length!==2||(p[0]!=='status'&&p[0]!=='area'))return;
      var vals={};p[1].split(',').forEach(function(v){try{vals[decodeURIComponent(v)]=1}catch(e){}});
      form.querySelectorAll('input[name='+p[0]+']').forEach(function(i){i.checked=!!vals[i.value]})});
  }
  function apply(){
    var st=chosen('status'),ar=chosen('area'),shown=0,all=0;
    document.querySelectorAll('article.fx').forEach(function(fx){
      all++;var vs=fx.querySelectorAll('li.v'),any=false;
      vs.forEach(function(v){var ok=!!(st[v.dataset.status]&&ar[v.dataset.area]);v.hidden=!ok;if(ok)any=true});
      if(!vs.length)any=!!st[fx.dataset.status];
      fx.hidden=!any;if(any)shown++;
    });
    document.querySelectorAll('#rollup tr[data-area]').forEach(function(tr){tr.hidden=!ar[tr.dataset.area]});
    document.getElementById('shown').textContent='showing '+shown+' of '+all+' exchanges';
  }
  function toHash(){
    var parts=['status','area'].map(function(n){return n+'='+Object.keys(chosen(n)).join(',')});
    history.replaceState(null,'','#'+parts.join('&'));
  }
  boxes.forEach(function(b){b.addEventListener('change',function(){apply();toHash()})});
  window.addEventListener('hashchange',function(){fromHash();apply()});
  fromHash();apply();
})();
`

// writeHTMLCoverage writes the coverage table: each rule, how the run
// came out on it, and why where it was not exercised.
func writeHTMLCoverage(b *strings.Builder, c *CoverageSummary) {
	fmt.Fprintf(b, "<h2>Coverage</h2>\n<p id=\"coverage\">%s</p>\n", esc(c.Line()))
	b.WriteString("<table id=\"coverage-rules\"><thead><tr><th>rule</th><th>status</th><th>why</th><th>fixtures</th><th>checks</th></tr></thead><tbody>\n")
	for _, r := range c.Rules {
		class := strings.ReplaceAll(r.Status, " ", "-")
		fmt.Fprintf(b, "<tr class=\"cov-%s\"><td><a href=\"#rule-%s\">%s</a> %s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			class, esc(r.ID), esc(r.ID), esc(r.Title), esc(r.Status), esc(r.Why), esc(strings.Join(r.Fixtures, " ")), esc(strings.Join(r.Checks, " ")))
	}
	b.WriteString("</tbody></table>\n")
}
