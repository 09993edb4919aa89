package envelope

// A DistilledEntry is one entry of a distilled validation failure, the
// shape the strict contract wants under error.data.errors: one entry per
// instance location (a JSON Pointer), with that location's problems,
// de-duplicated. The schema package's distiller produces this shape and
// the distilled checks judge servers against it.
type DistilledEntry struct {
	Location string   `json:"location"`
	Problems []string `json:"problems"`
}
