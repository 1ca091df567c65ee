package placement

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/seedwarden/seedwarden/internal/api"
)

// A Shoot's lists are its author's to make long; a message names the first
// maxListed of them and counts the rest.
func TestMessagesListBoundedly(t *testing.T) {
	assert.Equal(t, `["a", "b"]`, quoteList([]string{"a", "b"}))
	tols := make([]api.Toleration, 100000)
	for i := range tols {
		tols[i].Key = fmt.Sprint(i)
	}
	assert.Equal(t, `["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", … 99990 more]`, formatTolerations(tols))
}
