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
