package checks

import "testing"

// stackFrame knows the frames runtimes print, and not the values a
// reply's data holds that look a little like them.
func TestStackFrame(t *testing.T) {
	for _, c := range []struct {
		text  string
		frame bool
	}{
		{"at Object.add (/srv/app/tools/add.js:12:9)", true},
		{"    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)", true},
		{"at connect (db.py:41)", true},
		{"at src/main.rs:12:5", true},
		{"at com.example.Tools.add(Tools.java:12)", true},
		{"at java.base/jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)", true},
		{"at App.Tools.Add(Int32 a) in C:\\src\\Tools.cs:line 12", true},
		{"Traceback (most recent call last):", true},
		{`File "/srv/app/tools.py", line 12, in add`, true},
		{"goroutine 1 [running]:", true},
		{"/home/me/src/tools/add.go:12 +0x1d", true},
		{"/srv/app/tools.rb:12:in `add'", true},
		{"#0 /var/www/tools.php(12): add()", true},
		{"at example.com:8080", false},
		{"at 12:30", false},
		{"/params/arguments/a", false},
		{"main.go:12", false},
		{"2025-11-25", false},
		{"must be number", false},
		{"TypeError: can only concatenate str (not \"int\") to str", false},
	} {
		if got := isStackFrame(c.text); got != c.frame {
			t.Errorf("stackFrame(%q) = %v, want %v", c.text, got, c.frame)
		}
	}
}
