package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkLintRecorded lints real traffic: the transcripts recorded
// from real servers (testdata/recorded, canaries included), repeated to
// 20,000 exchanges, and reports exchanges/s; where jq is installed it
// also reports the throughput of `jq -c .` reading the same file, the
// yardstick of the target (lint at twice jq's rate).
//
//	go test -run x -bench LintRecorded -benchtime 3x ./cmd/wymcp-check
func BenchmarkLintRecorded(b *testing.B) {
	const want = 20_000
	files, err := filepath.Glob("../../testdata/recorded/*.jsonl")
	if err != nil || len(files) == 0 {
		b.Fatalf("no recorded transcripts: %v", err)
	}
	var exchanges [][]byte
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range bytes.Split(raw, []byte("\n")) {
			if bytes.Contains(l, []byte(`"transport"`)) {
				exchanges = append(exchanges, l)
			}
		}
	}
	path := writeLines(b, want, func(w io.Writer, j int) {
		w.Write(exchanges[j%len(exchanges)])
		w.Write([]byte("\n"))
	})
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s, _, _ := testStreams()
		s.Out = io.Discard
		if code := Main([]string{"lint", "--format", "json", path}, s); code != exitOK && code != exitFindings {
			b.Fatalf("exit %d", code)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*want)/b.Elapsed().Seconds(), "exchanges/s")
	b.ReportMetric(float64(st.Size())/b.Elapsed().Seconds()*float64(b.N)/(1<<20), "MB/s")
	if jq, err := exec.LookPath("jq"); err == nil {
		start := time.Now()
		cmd := exec.Command(jq, "-c", ".", path)
		cmd.Stdout = bufio.NewWriter(io.Discard)
		if err := cmd.Run(); err != nil {
			b.Fatalf("jq: %v", err)
		}
		b.ReportMetric(float64(want)/time.Since(start).Seconds(), "jq-exchanges/s")
	}
	b.ReportMetric(0, "ns/op")
}
