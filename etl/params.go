package etl

// ParamReader is implemented by component configurations (the pointer
// ComponentSpec.NewConfig returns) that read run parameters: the postgres
// and sqlite sources' :param_<name>. An agora/v1 file checks that each
// one is declared in its pipeline's params, where a name nothing declares
// would otherwise fail every scheduled run.
type ParamReader interface {
	// RunParams returns each run parameter the configuration reads, with
	// the key that reads it.
	RunParams() []ParamUse
}

// ParamUse is one run parameter a configuration reads.
type ParamUse struct {
	// Key is the configuration key that reads it ("query"), dotted for a
	// nested one, as FieldError.Key.
	Key string
	// Name is the parameter's name (day for :param_day).
	Name string
}
