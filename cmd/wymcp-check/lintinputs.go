package main

// someInputOpens stops lint before any report when none of its inputs
// can be opened: with nothing to judge, a name that is not there is a
// mistake to state, not a run to report. When some can, each that
// cannot is an input problem of the run (as a directory is): the rest
// is judged, the report written, and the run exits 2.
func someInputOpens(files []string) error {
	var first error
	for _, name := range files {
		err := transcriptsExist([]string{name})
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}
