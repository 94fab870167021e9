package filetools

// Small calls over one Multiplex.Calls stream (proto/filetools/v1/multiplex.proto):
// each gRPC call opens an HTTP/2 stream, whose set-up in the daemon (grpc-js)
// costs a small call most of its CPU there; one more message on an open stream
// costs a fraction of it. sharedConn is the grpc.ClientConnInterface the
// generated stubs call through: unary calls and eager Reads (ReadText) go on
// the shared stream, everything else on streams of their own. The stream
// opens with the first call and ends idleAfter its last. A daemon without the
// service answers Unimplemented: the calls then go on streams of their own.

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	filetoolsv1 "github.com/filetools/filetools/clients/go/gen/filetools/v1"
)

const (
	// maxOpenCalls is the daemon's limit of calls open on one stream; more go on streams of their own.
	maxOpenCalls = 64
	// maxSharedRequest: larger requests (a Write's content) go on streams of their own, so that one
	// request over the daemon's message limit fails alone rather than the whole stream.
	maxSharedRequest = 64 * 1024
	idleAfter        = 200 * time.Millisecond
	// maxTimeout is the largest timeout_ms; a farther deadline is sent as none.
	maxTimeout = time.Duration(1<<32-1) * time.Millisecond
)

// The one server stream the shared stream carries (see multiplex.proto).
var sharedStreams = map[string]bool{filetoolsv1.Files_Read_FullMethodName: true}

// eagerKey marks a context whose Read is taken whole as it comes (ReadText): it may share the stream.
type eagerKey struct{}

func eager(ctx context.Context) context.Context { return context.WithValue(ctx, eagerKey{}, true) }

type sharedConn struct {
	conn *grpc.ClientConn

	mu          sync.Mutex
	line        *callLine // the stream new calls go on; nil until the first call, and after it ended or went idle
	nextID      uint64
	unsupported bool
	idle        *time.Timer
}

// callLine is one Multiplex.Calls stream and the calls open on it.
type callLine struct {
	stream   filetoolsv1.Multiplex_CallsClient
	stop     context.CancelFunc
	sendMu   sync.Mutex             // Send is not safe for concurrent use
	open     map[uint64]*sharedCall // guarded by sharedConn.mu
	answered bool                   // guarded by sharedConn.mu: the daemon has the service
	// abandoned: calls given up here whose status has not come; the daemon counts them
	// against its 64 until it has sent it. Guarded by sharedConn.mu.
	abandoned map[uint64]bool
}

func newSharedConn(conn *grpc.ClientConn) *sharedConn { return &sharedConn{conn: conn} }

// close cancels the shared stream and its open calls.
func (s *sharedConn) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idle != nil {
		s.idle.Stop()
	}
	if s.line != nil {
		s.line.stop()
	}
}

// Invoke makes a unary call on the shared stream when it can, else on a stream of its own.
func (s *sharedConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	request, ok := sharable(args, opts)
	// A call with trace context to send goes on a stream of its own: the shared stream's metadata is its opener's.
	if !ok || len(traceHeaders(ctx)) > 0 {
		return s.conn.Invoke(ctx, method, args, reply, opts...)
	}
	call := s.start(ctx, method, request)
	if call == nil {
		return s.conn.Invoke(ctx, method, args, reply, opts...)
	}
	answer, err := call.next()
	if errors.Is(err, errFellBack) {
		return s.conn.Invoke(ctx, method, args, reply, opts...)
	}
	if err == nil && answer == nil {
		err = status.Errorf(codes.Internal, "the daemon's answer to %s lacks its message", method)
	}
	if err != nil {
		return err
	}
	return proto.Unmarshal(answer, reply.(proto.Message))
}

// NewStream makes an eager Read on the shared stream, and any other stream on its own.
func (s *sharedConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if !sharedStreams[method] || ctx.Value(eagerKey{}) == nil || !onlyStatic(opts) || len(traceHeaders(ctx)) > 0 {
		return s.conn.NewStream(ctx, desc, method, opts...)
	}
	return &sharedStream{shared: s, ctx: ctx, desc: desc, method: method, opts: opts}, nil
}

var errFellBack = errors.New("the daemon has no Multiplex service")

// sharable is the request's bytes when the call may go on the shared stream. The size is
// measured first: a large request (a Write's content) is marshalled only where it goes.
func sharable(args any, opts []grpc.CallOption) ([]byte, bool) {
	message, ok := args.(proto.Message)
	if !ok || !onlyStatic(opts) || proto.Size(message) > maxSharedRequest {
		return nil, false
	}
	request, err := proto.Marshal(message)
	if err != nil {
		return nil, false
	}
	return request, true
}

// onlyStatic: the generated stubs pass grpc.StaticMethod(); a caller's own options need a stream of its own.
func onlyStatic(opts []grpc.CallOption) bool {
	for _, opt := range opts {
		if _, ok := opt.(grpc.StaticMethodCallOption); !ok {
			return false
		}
	}
	return true
}

// start sends the call's start on the shared stream; nil when it cannot go there now.
func (s *sharedConn) start(ctx context.Context, method string, request []byte) *sharedCall {
	s.mu.Lock()
	if s.unsupported || (s.line != nil && len(s.line.open)+len(s.line.abandoned) >= maxOpenCalls) {
		s.mu.Unlock()
		return nil
	}
	if s.idle != nil {
		s.idle.Stop()
	}
	line := s.line
	if line == nil {
		var err error
		if line, err = s.openLine(); err != nil {
			s.mu.Unlock()
			return nil
		}
	}
	s.nextID++
	call := &sharedCall{id: s.nextID, shared: s, line: line, ready: make(chan struct{}, 1)}
	line.open[call.id] = call
	s.mu.Unlock()

	if ctx.Err() != nil { // nothing sent: nothing for the daemon to answer
		s.settle(line, call.id, status.FromContextError(ctx.Err()).Err())
		return call
	}
	// The context's end (a cancel, its deadline) cancels the call on the daemon and ends it here. The start
	// is sent even if that comes first: the daemon ignores a cancel for a call it has not seen, and the
	// status it then sends lets the call's place go.
	call.stopWatching = context.AfterFunc(ctx, func() { call.abandon(status.FromContextError(ctx.Err()).Err()) })
	var timeoutMs uint32
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) <= maxTimeout {
		timeoutMs = uint32(max(1, (time.Until(deadline)+time.Millisecond-1)/time.Millisecond))
	}
	line.send(&filetoolsv1.CallsRequest{Id: call.id, Event: &filetoolsv1.CallsRequest_Start{Start: &filetoolsv1.CallStart{
		Method: method[1:], Request: request, TimeoutMs: timeoutMs,
	}}})
	return call
}

// openLine opens a stream and its reader; s.mu is held.
func (s *sharedConn) openLine() (*callLine, error) {
	ctx, stop := context.WithCancel(context.Background())
	stream, err := filetoolsv1.NewMultiplexClient(s.conn).Calls(ctx)
	if err != nil {
		stop()
		return nil, err
	}
	line := &callLine{stream: stream, stop: stop, open: map[uint64]*sharedCall{}, abandoned: map[uint64]bool{}}
	s.line = line
	go s.read(line)
	return line, nil
}

// read hands each answer to its call until the stream ends, then ends the calls still open on it.
func (s *sharedConn) read(line *callLine) {
	defer line.stop()
	for {
		response, err := line.stream.Recv()
		if err != nil {
			s.ended(line, err)
			return
		}
		s.mu.Lock()
		line.answered = true
		call := line.open[response.GetId()]
		if _, ended := response.GetEvent().(*filetoolsv1.CallsResponse_Status); ended {
			delete(line.abandoned, response.GetId())
		}
		s.mu.Unlock()
		if call == nil {
			continue // given up here already
		}
		switch event := response.GetEvent().(type) {
		case *filetoolsv1.CallsResponse_Message:
			call.push(event.Message)
		case *filetoolsv1.CallsResponse_Status:
			s.settle(line, call.id, statusError(event.Status))
		}
	}
}

// settle ends call `id` on `line` with err (nil: OK), once.
func (s *sharedConn) settle(line *callLine, id uint64, err error) {
	s.mu.Lock()
	call := line.open[id]
	delete(line.open, id)
	if len(line.open) == 0 && line == s.line {
		s.armIdle(line)
	}
	s.mu.Unlock()
	if call != nil {
		call.end(err)
	}
}

// armIdle ends the stream if no call comes within idleAfter; s.mu is held.
func (s *sharedConn) armIdle(line *callLine) {
	if s.idle != nil {
		s.idle.Stop()
	}
	// A half-close, after which the daemon ends the stream; cancelled outright when calls given up here
	// are still unanswered, or when the daemon has not ended it within idleAfter more (a stalled daemon
	// must not hold the stream and its reader).
	s.idle = time.AfterFunc(idleAfter, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.line != line || len(line.open) > 0 {
			return
		}
		s.line = nil
		if len(line.abandoned) > 0 {
			line.stop()
			return
		}
		line.sendMu.Lock()
		_ = line.stream.CloseSend()
		line.sendMu.Unlock()
		time.AfterFunc(idleAfter, line.stop)
	})
}

// ended: the stream is over; its open calls fail with its status, or fall back when the daemon has no service.
func (s *sharedConn) ended(line *callLine, err error) {
	s.mu.Lock()
	if s.line == line {
		s.line = nil
	}
	calls := line.open
	line.open = map[uint64]*sharedCall{}
	fallBack := status.Code(err) == codes.Unimplemented && !line.answered
	if fallBack {
		s.unsupported = true
	}
	s.mu.Unlock()
	err = streamEndError(err)
	if fallBack {
		err = errFellBack
	}
	for _, call := range calls {
		call.end(err)
	}
}

// statusError is the error of a call's end (a google.rpc.Status's bytes), nil for OK.
func statusError(bytes []byte) error {
	var st spb.Status
	if err := proto.Unmarshal(bytes, &st); err != nil {
		return status.Errorf(codes.Internal, "the daemon sent an undecodable status: %v", err)
	}
	if st.GetCode() == int32(codes.OK) {
		return nil
	}
	return status.ErrorProto(&st)
}

// streamEndError is what a call still open learns when its stream ends: the daemon's own refusal of
// the stream (a token, a malformed message) as it is, Close as Canceled, and anything else (the daemon
// going away, the connection dropped) as Unavailable: the call may or may not have run.
func streamEndError(err error) error {
	if errors.Is(err, io.EOF) {
		return status.Error(codes.Unavailable, "the daemon ended the stream of calls before this call's answer")
	}
	switch status.Code(err) {
	case codes.InvalidArgument, codes.Unauthenticated, codes.Canceled, codes.Unavailable:
		return err
	}
	return status.Errorf(codes.Unavailable, "%s before this call's answer", status.Convert(err).Message())
}

func (line *callLine) send(request *filetoolsv1.CallsRequest) {
	line.sendMu.Lock()
	defer line.sendMu.Unlock()
	// A failed send means the stream is gone: Recv reports why, and ends the calls.
	_ = line.stream.Send(request)
}

// sharedCall is one call on the shared stream: its messages as they come, then its end.
type sharedCall struct {
	id     uint64
	shared *sharedConn
	line   *callLine

	stopWatching func() bool // stops the context's watch

	mu       sync.Mutex
	messages [][]byte
	done     bool
	err      error
	ready    chan struct{} // a message or the end came
}

func (c *sharedCall) push(message []byte) {
	c.mu.Lock()
	c.messages = append(c.messages, message)
	c.mu.Unlock()
	c.wake()
}

func (c *sharedCall) end(err error) {
	if c.stopWatching != nil {
		c.stopWatching()
	}
	c.mu.Lock()
	if !c.done {
		c.done, c.err = true, err
	}
	c.mu.Unlock()
	c.wake()
}

func (c *sharedCall) wake() {
	select {
	case c.ready <- struct{}{}:
	default:
	}
}

// next is the call's next message; (nil, nil) at its OK end; the status error at a failed one.
func (c *sharedCall) next() ([]byte, error) {
	for {
		c.mu.Lock()
		if len(c.messages) > 0 {
			message := c.messages[0]
			c.messages = c.messages[1:]
			c.mu.Unlock()
			return message, nil
		}
		if c.done {
			c.mu.Unlock()
			return nil, c.err
		}
		c.mu.Unlock()
		<-c.ready
	}
}

// abandon cancels the call on the daemon if it is still open, and ends it with err (a no-op once it has ended).
func (c *sharedCall) abandon(err error) {
	c.shared.mu.Lock()
	_, open := c.line.open[c.id]
	if open {
		c.line.abandoned[c.id] = true // until its status comes
	}
	c.shared.mu.Unlock()
	if !open {
		return
	}
	c.line.send(&filetoolsv1.CallsRequest{Id: c.id, Event: &filetoolsv1.CallsRequest_Cancel{Cancel: &filetoolsv1.CallCancel{}}})
	c.shared.settle(c.line, c.id, err)
}

// sharedStream is an eager Read on the shared stream, as the grpc.ClientStream the generated stub reads.
type sharedStream struct {
	shared *sharedConn
	ctx    context.Context
	desc   *grpc.StreamDesc
	method string
	opts   []grpc.CallOption

	request any // the one request, for a stream of its own after a fallback
	call    *sharedCall
	own     grpc.ClientStream // the call on a stream of its own, when it could not share
}

func (s *sharedStream) SendMsg(m any) error {
	s.request = m
	if request, ok := sharable(m, s.opts); ok {
		s.call = s.shared.start(s.ctx, s.method, request)
	}
	if s.call == nil {
		return s.startOwn(m)
	}
	return nil
}

func (s *sharedStream) startOwn(m any) error {
	own, err := s.shared.conn.NewStream(s.ctx, s.desc, s.method, s.opts...)
	if err != nil {
		return err
	}
	s.own = own
	if err := own.SendMsg(m); err != nil {
		return err
	}
	return own.CloseSend()
}

func (s *sharedStream) RecvMsg(m any) error {
	if s.own != nil {
		return s.own.RecvMsg(m)
	}
	message, err := s.call.next()
	switch {
	case errors.Is(err, errFellBack):
		if err := s.startOwn(s.request); err != nil {
			return err
		}
		return s.own.RecvMsg(m)
	case err != nil:
		return err
	case message == nil:
		return io.EOF
	}
	return proto.Unmarshal(message, m.(proto.Message))
}

// CloseSend: the one request was all (a stream of its own is closed after it).
func (s *sharedStream) CloseSend() error { return nil }

func (s *sharedStream) Header() (metadata.MD, error) { return nil, nil }
func (s *sharedStream) Trailer() metadata.MD         { return nil }
func (s *sharedStream) Context() context.Context     { return s.ctx }
