package filetools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	filetoolsv1 "github.com/filetools/filetools/clients/go/gen/filetools/v1"
)

// chunkSize is the size of the chunks Upload and ImportArchive send (the
// daemon takes at most 1 MiB a chunk).
const chunkSize = 1 << 20

// streamItems runs a server-streaming call as an iterator: each passes the
// items a message holds to yield (and returns false once yield does).
// Leaving the range loop early cancels the call, so the daemon stops working.
func streamItems[M, T any](
	ctx context.Context,
	open func(context.Context) (grpc.ServerStreamingClient[M], error),
	each func(msg *M, yield func(T) bool) bool,
) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var zero T
		stream, err := open(ctx)
		if err != nil {
			yield(zero, fromRPC(err))
			return
		}
		for {
			msg, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(zero, fromRPC(err))
				return
			}
			if !each(msg, func(item T) bool { return yield(item, nil) }) {
				return
			}
		}
	}
}

// announced is what a byte stream's header promises.
type announced interface {
	GetSize() int64
	GetSha256() string
}

// headerThenChunks is a message of Download or ExportSnapshot: one header,
// then chunks.
type headerThenChunks[H announced] interface {
	GetHeader() H
	GetChunk() *filetoolsv1.DataChunk
}

// Progress is told the bytes received so far and the total the header
// announced.
type Progress func(done, total int64)

// receiveBytes copies a header-then-chunks stream to w and checks that the
// bytes are those the header announced (count and sha256): a mismatch is an
// *Error with codes.DataLoss. Errors of w are returned wrapped, as they are.
func receiveBytes[H announced, M headerThenChunks[H]](recv func() (M, error), w io.Writer, progress Progress) (H, error) {
	var header, none H // none: what an error returns
	seenHeader := false
	hash := sha256.New()
	var done int64
	for {
		msg, err := recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return none, fromRPC(err)
		}
		chunk := msg.GetChunk()
		if chunk == nil {
			header, seenHeader = msg.GetHeader(), true
			continue
		}
		if !seenHeader {
			return none, newClientError(codes.Internal, "the daemon sent data before the header")
		}
		if _, err := w.Write(chunk.GetData()); err != nil {
			return none, fmt.Errorf("filetools: writing the received bytes: %w", err)
		}
		hash.Write(chunk.GetData())
		done += int64(len(chunk.GetData()))
		if progress != nil {
			progress(done, header.GetSize())
		}
	}
	if !seenHeader {
		return none, newClientError(codes.Internal, "the daemon's stream ended without a header")
	}
	if sum := hex.EncodeToString(hash.Sum(nil)); done != header.GetSize() || sum != header.GetSha256() {
		return none, newClientError(codes.DataLoss, "received %d bytes with sha256 %s; the header announced %d bytes with sha256 %s",
			done, sum, header.GetSize(), header.GetSha256())
	}
	return header, nil
}

// sendBytes sends r's bytes in chunks. Errors of r are returned wrapped, as
// they are; the caller cancels the call then, so the daemon keeps nothing.
func sendBytes(r io.Reader, send func([]byte) error) error {
	for {
		// A fresh buffer each time: grpc-go may keep a sent message for a while.
		buf := make([]byte, chunkSize)
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			if err := send(buf[:n]); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("filetools: reading the bytes to send: %w", err)
		}
	}
}

// writeFileAtomically writes path through a temporary file in the same
// directory, renamed over it only once fill succeeded and the bytes are on
// disk: path ends up complete or untouched.
func writeFileAtomically(path string, fill func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.part")
	if err != nil {
		return fmt.Errorf("filetools: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := fill(tmp); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("filetools: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("filetools: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("filetools: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("filetools: %w", err)
	}
	return syncDirectory(filepath.Dir(path))
}

// syncDirectory makes a rename in dir durable.
func syncDirectory(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("filetools: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("filetools: %w", err)
	}
	return nil
}

// sendStream runs a client-streaming call: the header message, then r's
// bytes as chunk messages. Leaving early (an error of r) cancels the call.
func sendStream[Req, Resp any](
	ctx context.Context,
	open func(context.Context, ...grpc.CallOption) (grpc.ClientStreamingClient[Req, Resp], error),
	r io.Reader,
	header *Req,
	chunk func([]byte) *Req,
) (*Resp, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := open(ctx)
	if err != nil {
		return nil, fromRPC(err)
	}
	sendFailed := false
	send := func(msg *Req) error {
		err := stream.Send(msg)
		sendFailed = err != nil
		return err
	}
	err = send(header)
	if err == nil {
		err = sendBytes(r, func(data []byte) error { return send(chunk(data)) })
	}
	switch {
	case err == nil, errors.Is(err, io.EOF):
		// io.EOF: the daemon ended the call early; CloseAndRecv has its status.
		resp, err := stream.CloseAndRecv()
		return resp, fromRPC(err)
	case sendFailed:
		return nil, fromRPC(err)
	default:
		return nil, err
	}
}
