package filetools

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	filetoolsv1 "github.com/filetools/filetools/clients/go/gen/filetools/v1"
)

// Client talks to one filetoolsd. It is safe for concurrent use; Close it
// when done.
type Client struct {
	conn       *grpc.ClientConn
	shared     *sharedConn // nil with WithoutSharedStream
	files      filetoolsv1.FilesClient
	workspaces filetoolsv1.WorkspacesClient
	daemon     filetoolsv1.DaemonClient
	journal    filetoolsv1.JournalClient // its streams are long-lived: never on the shared stream
}

// Option configures Dial.
type Option func(*dialSettings)

type dialSettings struct {
	ownStreams  bool
	token       string
	tlsConfig   *tls.Config
	dialOptions []grpc.DialOption
	err         error // the first failure of an option (e.g. an unreadable certificate file)
}

// WithToken sends "authorization: Bearer TOKEN" with every call (the daemon's
// --tokens file). Without TLS the token is only sent to a loopback or unix
// socket address: Dial refuses to send it in clear over a network.
func WithToken(token string) Option {
	return func(s *dialSettings) { s.token = token }
}

// WithTLS connects over TLS with the given configuration (set Certificates
// for mutual TLS).
func WithTLS(config *tls.Config) Option {
	return func(s *dialSettings) { s.tlsConfig = config }
}

// WithTLSFiles connects over TLS, trusting the PEM certificates in caFile
// (empty: the system's roots) and presenting the client certificate in
// certFile and keyFile for mutual TLS (both empty: none).
func WithTLSFiles(caFile, certFile, keyFile string) Option {
	return func(s *dialSettings) {
		config := &tls.Config{MinVersion: tls.VersionTLS12}
		if caFile != "" {
			pem, err := os.ReadFile(caFile)
			if err != nil {
				s.fail(fmt.Errorf("filetools: TLS CA file: %w", err))
				return
			}
			config.RootCAs = x509.NewCertPool()
			if !config.RootCAs.AppendCertsFromPEM(pem) {
				s.fail(fmt.Errorf("filetools: TLS CA file %s holds no PEM certificate", caFile))
				return
			}
		}
		if certFile != "" || keyFile != "" {
			pair, err := tls.LoadX509KeyPair(certFile, keyFile)
			if err != nil {
				s.fail(fmt.Errorf("filetools: TLS client certificate: %w", err))
				return
			}
			config.Certificates = []tls.Certificate{pair}
		}
		s.tlsConfig = config
	}
}

// WithoutSharedStream gives every call an HTTP/2 stream of its own. By
// default unary calls and ReadText share one Multiplex.Calls stream (see
// multiplex.go), which costs a small call a fraction of its own stream's
// set-up in the daemon; it ends 200 ms after the last call.
func WithoutSharedStream() Option {
	return func(s *dialSettings) { s.ownStreams = true }
}

// WithDialOptions passes options to grpc.NewClient as they are (interceptors,
// message size limits, keepalive, ...). Every call then has a stream of its
// own (as with WithoutSharedStream), so that interceptors see each one.
func WithDialOptions(options ...grpc.DialOption) Option {
	return func(s *dialSettings) { s.dialOptions = append(s.dialOptions, options...) }
}

func (s *dialSettings) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// Dial connects to the daemon at address ("host:port" or "unix:///path") and
// checks, within ctx, that it serves: an address where no daemon listens, or
// a failed TLS handshake, is an error here rather than at the first call.
func Dial(ctx context.Context, address string, options ...Option) (*Client, error) {
	var s dialSettings
	for _, option := range options {
		option(&s)
	}
	if s.err != nil {
		return nil, s.err
	}
	transport := insecure.NewCredentials()
	if s.tlsConfig != nil {
		transport = credentials.NewTLS(s.tlsConfig)
	}
	dialOptions := []grpc.DialOption{
		grpc.WithTransportCredentials(transport),
		grpc.WithChainUnaryInterceptor(traceUnary),
		grpc.WithChainStreamInterceptor(traceStream),
	}
	if s.token != "" {
		if s.tlsConfig == nil && !isLocal(address) {
			return nil, fmt.Errorf("filetools: refusing to send a token without TLS to %s (not a loopback address)", address)
		}
		dialOptions = append(dialOptions, grpc.WithPerRPCCredentials(bearerToken{token: s.token, requireTLS: s.tlsConfig != nil}))
	}
	conn, err := grpc.NewClient(address, append(dialOptions, s.dialOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("filetools: %w", err)
	}
	if err := checkHealth(ctx, conn); err != nil {
		_ = conn.Close()
		return nil, err
	}
	client := &Client{conn: conn}
	var calls grpc.ClientConnInterface = conn
	// Interceptors among the dial options must see every call: with any, calls get streams of their own.
	if !s.ownStreams && len(s.dialOptions) == 0 {
		client.shared = newSharedConn(conn)
		calls = client.shared
	}
	client.files = filetoolsv1.NewFilesClient(calls)
	client.workspaces = filetoolsv1.NewWorkspacesClient(calls)
	client.daemon = filetoolsv1.NewDaemonClient(calls)
	client.journal = filetoolsv1.NewJournalClient(conn)
	return client, nil
}

// ServerVersion is the daemon's release, the proto package it serves and its
// runtime (Daemon.GetVersion); this client's own is Version.
func (c *Client) ServerVersion(ctx context.Context) (*filetoolsv1.GetVersionResponse, error) {
	return unary(ctx, c.daemon.GetVersion, &filetoolsv1.GetVersionRequest{})
}

// Close closes the connection; calls in flight fail with codes.Canceled.
func (c *Client) Close() error {
	if c.shared != nil {
		c.shared.close()
	}
	return c.conn.Close()
}

// Conn is the underlying connection, for the generated stubs in
// gen/filetools/v1 or the standard health service.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// checkHealth asks the daemon's standard health service (open even when
// the daemon wants tokens) whether it serves; a connection that cannot be
// made fails here with the transport's reason.
func checkHealth(ctx context.Context, conn *grpc.ClientConn) error {
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return fromRPC(err)
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return newClientError(codes.Unavailable, "the daemon at %s is %s", conn.Target(), resp.GetStatus())
	}
	return nil
}

// isLocal reports whether address never leaves this machine: a unix socket
// or a loopback host.
func isLocal(address string) bool {
	if strings.HasPrefix(address, "unix:") {
		return true
	}
	host, _, err := net.SplitHostPort(strings.TrimPrefix(address, "dns:///"))
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// bearerToken is the per-call "authorization" metadata.
type bearerToken struct {
	token      string
	requireTLS bool
}

func (b bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

// RequireTransportSecurity is false only for the loopback case Dial allowed:
// grpc-go refuses per-call credentials on a plaintext connection otherwise.
func (b bearerToken) RequireTransportSecurity() bool { return b.requireTLS }
