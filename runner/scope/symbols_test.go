package scope

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSymbolsListsEachSpanOnce(t *testing.T) {
	src := []byte(`package p

// Limit is a block.
const (
	Limit = 3
	Other = 4
)

var _ = 1

func init() {}
func init() {}

type T struct{}

func (t *T) M() {}
func (T) N()    {}

type (
	A int
	B[X any] struct{ x X }
)

func (b B[X]) Get() X { return b.x }

func Free() {}
`)
	decls, err := Symbols("p.go", src)
	require.NoError(t, err)
	var names []string
	for _, d := range decls {
		names = append(names, d.Name)
		r, err := SymbolRange("p.go", src, d.Name)
		if assert.NoError(t, err, "every listed name finds its span: %s", d.Name) {
			assert.Equal(t, LineRange{Start: d.Start, End: d.End}, r, d.Name)
		}
	}
	assert.Equal(t, []string{"Limit", "T", "T.M", "T.N", "A", "B", "B.Get", "Free"}, names)
	_, err = Symbols("p.go", []byte("package"))
	assert.Error(t, err)
}
