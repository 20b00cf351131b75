package engine

// The first attempt samples as the server does by default; each retry asks for a seed of its
// own and a temperature a step higher, so it is a new draw rather than the reply before it again:
// a small model at its server's default temperature, given much the same prompt, often repeats
// its last reply word for word.
const (
	retryTemperature     = 1.0
	retryTemperatureStep = 0.2
	retryTemperatureMax  = 1.4
)

// RetrySampling is the temperature and seed attempt n (from 1) asks for; nil, nil for the first,
// which keeps the server's own.
func RetrySampling(attempt int) (temperature *float64, seed *int64) {
	if attempt <= 1 {
		return nil, nil
	}
	t := min(retryTemperature+retryTemperatureStep*float64(attempt-2), retryTemperatureMax)
	s := int64(attempt)
	return &t, &s
}
