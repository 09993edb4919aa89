package main

import "runtime/debug"

// checkerVersion is the version the checker reports. A release build sets
// version with -ldflags and that wins; a binary built by
// `go install …@vX` carries vX in its build info; a build from a
// checkout reports the development string.
func checkerVersion() string {
	info, ok := debug.ReadBuildInfo()
	return versionFrom(version, info, ok)
}

// devVersion is what version holds unless -ldflags set it.
const devVersion = "0.1.0-dev"

func versionFrom(ldflags string, info *debug.BuildInfo, ok bool) string {
	if ldflags != devVersion {
		return ldflags
	}
	// "(devel)" is what a build from a work tree records.
	if ok && info != nil && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return ldflags
}
