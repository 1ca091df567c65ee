package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// guardServer serves h behind Guard with the given timeouts, the way
// the webhook server does (an http.Server without Read/WriteTimeout).
func guardServer(t *testing.T, read, write time.Duration, h http.Handler) *httptest.Server {
	t.Helper()
	l := Limits{MaxRequestBytes: 1 << 10, ReadTimeout: read, WriteTimeout: write}
	srv := httptest.NewServer(Guard(l, nil, h))
	t.Cleanup(srv.Close)
	return srv
}

// echo answers with the length of the body it read and whether the
// request's context was still alive when it answered.
func echo(delay time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
		}
		fmt.Fprintf(w, "read %d, context %v", len(b), r.Context().Err())
	})
}

// A client that sends its headers and then stalls is cut off once
// readTimeout has passed; the server goes on serving.
func TestGuardCutsOffStalledBody(t *testing.T) {
	srv := guardServer(t, 300*time.Millisecond, 5*time.Second, echo(0))
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	start := time.Now()
	_, err = fmt.Fprint(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":")
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	got, _ := io.ReadAll(conn) // until the server closes the connection
	took := time.Since(start)
	assert.GreaterOrEqual(t, took, 250*time.Millisecond, "cut off before readTimeout")
	assert.Less(t, took, 2*time.Second, "not cut off within readTimeout")
	assert.Contains(t, string(got), "400 Bad Request", "the handler saw the read fail")
	assert.Contains(t, string(got), "i/o timeout")
	assert.Contains(t, string(got), "Connection: close")

	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, "read 2, context <nil>", string(b), "the server keeps serving")
}

// Once the body is in, the read deadline no longer applies (net/http lifts
// it): a handler that works longer than readTimeout (waiting for the API
// server, say) is neither cut off nor has its context cancelled. Nor is one
// of a request without a body.
func TestGuardReadDeadlineEndsWithBody(t *testing.T) {
	srv := guardServer(t, 200*time.Millisecond, 5*time.Second, echo(600*time.Millisecond))
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"a":1}`))
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "read 7, context <nil>", string(b))

	resp, err = http.Post(srv.URL, "application/json", nil)
	require.NoError(t, err)
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, "read 0, context <nil>", string(b))
}

// The answer must be written within writeTimeout of the request: a handler
// that takes longer loses the connection (the API server would have given
// up by then anyway).
func TestGuardWriteDeadline(t *testing.T) {
	srv := guardServer(t, time.Second, 300*time.Millisecond, echo(700*time.Millisecond))
	c := &http.Client{Timeout: 5 * time.Second}
	_, err := c.Post(srv.URL, "application/json", strings.NewReader(`{}`))
	require.Error(t, err, "an answer written after writeTimeout arrived")
}

// Deadlines are per request: a kept-alive connection serves a later request
// long after the first one's deadlines have passed.
func TestGuardDeadlinesPerRequest(t *testing.T) {
	srv := guardServer(t, 100*time.Millisecond, 200*time.Millisecond, echo(0))
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	for i := range 2 {
		reused := false
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
		})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{}`))
		require.NoError(t, err)
		resp, err := c.Do(req)
		require.NoError(t, err, "request %d", i)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, "read 2, context <nil>", string(b))
		assert.Equal(t, i == 1, reused, "request %d: connection reused", i)
		time.Sleep(400 * time.Millisecond) // past both deadlines of this request
	}
}

// Bodies over the limit are refused: by Content-Length before reading, or
// while reading when the length is not declared.
func TestGuardBodyLimit(t *testing.T) {
	srv := guardServer(t, time.Second, 5*time.Second, echo(0))
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(strings.Repeat(" ", 2000)))
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.Contains(t, string(b), "request body of 2000 bytes exceeds the limit of 1024 bytes (server.maxRequestBytes)")

	// Chunked: no Content-Length, so the limit applies while reading.
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	chunk := strings.Repeat("x", 2000)
	_, err = fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(chunk), chunk)
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	r, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	b, _ = io.ReadAll(r.Body)
	r.Body.Close()
	assert.Equal(t, http.StatusBadRequest, r.StatusCode, "echo reports the read error")
	assert.Contains(t, string(b), "http: request body too large")
}

// maxSizeReview is a CREATE AdmissionReview of a Shoot that carries one
// annotation of filler, n bytes in all (n > 1 KiB).
func maxSizeReview(t *testing.T, n int) []byte {
	t.Helper()
	review := func(filler string) []byte {
		object := fmt.Sprintf(`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","metadata":{"name":"big","namespace":"garden-dev","annotations":{"example.com/filler":%q}},"spec":{"region":"eu-west-1","provider":{"type":"aws"}}}`, filler)
		return fmt.Appendf(nil, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"7f0a4c1e-4b1d-4e63-9a51-3c1f0e2d9b8a","kind":{"group":"core.gardener.cloud","version":"v1beta1","kind":"Shoot"},"resource":{"group":"core.gardener.cloud","version":"v1beta1","resource":"shoots"},"name":"big","namespace":"garden-dev","operation":"CREATE","userInfo":{"username":"alice"},"object":%s}}`, object)
	}
	body := review(strings.Repeat("x", n-len(review(""))))
	require.Len(t, body, n)
	return body
}

// The memory finding's input: 100 clients at once, each sending a review of
// almost the 3 MiB body limit. However they arrive, the bodies of the
// requests being handled never add up to more than the budget's share for
// large requests (the defaults: 4 MiB less the 1 MiB reserve, one such
// request); the others wait for requestQueueTimeout and are answered 429
// with the documented message, without their review being decoded. Here
// the admitted request is held until all others have been refused, so that
// exactly one is admitted.
func TestGuardBudgetHoldsUnderLargeReviews(t *testing.T) {
	const (
		clients      = 100
		maxBytes     = 3 << 20
		budgetBytes  = 4 << 20
		reviewBytes  = 3_145_000
		admittedMost = (budgetBytes - SmallRequestReserve) / reviewBytes // 1
	)
	body := maxSizeReview(t, reviewBytes)
	counted := &outcomes{}
	budget := NewBudget(budgetBytes, maxBytes, 200*time.Millisecond, counted)

	var mu sync.Mutex
	var inHandlers, maxInHandlers int64
	allRefused := make(chan struct{})
	go func() {
		defer close(allRefused)
		for counted.get()[BudgetRefused] < clients-admittedMost {
			time.Sleep(10 * time.Millisecond)
		}
	}()
	decodes := &webhook.Admission{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		<-allRefused
		return admission.Allowed("")
	})}
	// Counts the bytes of the requests whose handler runs, independently of
	// the budget's own count.
	tracked := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inHandlers += r.ContentLength
		maxInHandlers = max(maxInHandlers, inHandlers)
		mu.Unlock()
		defer func() {
			mu.Lock()
			inHandlers -= r.ContentLength
			mu.Unlock()
		}()
		decodes.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(Guard(Limits{MaxRequestBytes: maxBytes, ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second, Budget: budget}, nil, tracked))
	t.Cleanup(srv.Close)

	type answer struct {
		status int
		body   string
	}
	answers := make(chan answer, clients)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(body))
			if !assert.NoError(t, err) {
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.NoError(t, err)
			answers <- answer{resp.StatusCode, string(b)}
		})
	}
	wg.Wait()
	close(answers)

	byStatus := map[int]int{}
	for a := range answers {
		byStatus[a.status]++
		switch a.status {
		case http.StatusOK:
			assert.Contains(t, a.body, `"uid":"7f0a4c1e-4b1d-4e63-9a51-3c1f0e2d9b8a","allowed":true`)
		case http.StatusTooManyRequests:
			assert.Regexp(t, `^request body of 3145000 bytes refused: no room within 200ms \(server.requestQueueTimeout\) in server.maxRequestBytesInFlight: 4194304 bytes, \d+ in use, 1048576 of them kept for requests of at most 65536 bytes\n$`, a.body)
		default:
			t.Errorf("answer %d: %s", a.status, a.body)
		}
	}
	assert.Equal(t, map[int]int{http.StatusOK: admittedMost, http.StatusTooManyRequests: clients - admittedMost}, byStatus)
	assert.Equal(t, int64(admittedMost*reviewBytes), maxInHandlers, "bytes in the handlers at most")
	assert.LessOrEqual(t, maxInHandlers, int64(budgetBytes-SmallRequestReserve))
	assert.Zero(t, budget.InFlight(), "every request gave its bytes back")
	assert.Equal(t, map[string]int{BudgetRefused: clients - admittedMost}, counted.get())
}

// GuardOrStream: a body over SmallRequestBytes, or one the budget has no
// room for at once, goes to the streaming handler without taking budget or
// waiting; a small one that fits goes to the buffered handler with its
// bytes taken.
func TestGuardOrStreamSendsWhatTheBudgetDoesNotHoldToStreaming(t *testing.T) {
	const maxBytes = 3 << 20
	counted := &outcomes{}
	budget := NewBudget(4<<20, maxBytes, time.Second, counted)
	var inFlightSeen int64
	handler := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inFlightSeen = budget.InFlight()
			_, _ = io.Copy(io.Discard, r.Body)
			_, _ = io.WriteString(w, name)
		})
	}
	srv := httptest.NewServer(GuardOrStream(Limits{MaxRequestBytes: maxBytes, ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second, Budget: budget},
		nil, handler("buffered"), handler("streamed")))
	t.Cleanup(srv.Close)
	post := func(n int) string {
		t.Helper()
		resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(bytes.Repeat([]byte(" "), n)))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
		return string(b)
	}

	assert.Equal(t, "buffered", post(SmallRequestBytes))
	assert.Equal(t, int64(SmallRequestBytes), inFlightSeen, "a small body takes its bytes")
	assert.Equal(t, "streamed", post(SmallRequestBytes+1))
	assert.Zero(t, inFlightSeen, "a large body takes none")

	// The whole budget taken: a small body is streamed at once, not queued.
	require.True(t, budget.acquire(context.Background(), 3<<20))
	for range 1 + SmallRequestReserve/SmallRequestBytes { // until no more fit
		if !budget.tryAcquire(SmallRequestBytes) {
			break
		}
	}
	held := budget.InFlight()
	assert.Equal(t, "streamed", post(1000))
	assert.Equal(t, held, inFlightSeen)
	assert.Equal(t, map[string]int{BudgetStreamed: 2}, counted.get(), "the fill's last try and the request, neither refused nor queued")
}
