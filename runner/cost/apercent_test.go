package cost

import "testing"

func TestAPercent(t *testing.T) {
	for share, want := range map[float64]string{0.5: "a 50%", 0.8: "an 80%", 0.08: "an 8%", 0.11: "an 11%", 0.18: "an 18%", 0.36: "a 36%", 1: "a 100%", 0.85: "an 85%"} {
		if got := APercent(share); got != want {
			t.Errorf("APercent(%v) = %q, want %q", share, got, want)
		}
	}
}
