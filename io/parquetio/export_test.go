package parquetio

// Entry points with an explicit allocator, so tests can check with
// memory.NewCheckedAllocator that every Arrow buffer is released.
var (
	ReadWith              = readWith
	WriteTrajectoriesWith = writeTrajectories
	WritePolicyWith       = writePolicy
	ReadPolicyWith        = readPolicy
	AnnotateWith          = annotate
)

// SetOnePass makes Read take the serial single-pass way (see onePass) until
// restore is called.
func SetOnePass(on bool) (restore func()) {
	was := onePass
	onePass = on
	return func() { onePass = was }
}
