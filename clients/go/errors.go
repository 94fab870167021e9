package filetools

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Reason is the closed set of failure reasons the daemon sends in the
// google.rpc.ErrorInfo detail of every error (domain "filetools"): the names
// of the ErrorReason enum in proto/filetools/v1/common.proto without their
// "ERROR_REASON_" prefix. It is a string, as on the wire, so that a reason
// added by a newer daemon still reads well; the empty Reason means the error
// carried no ErrorInfo (a deadline or cancellation seen by the client itself,
// or a transport failure).
type Reason string

const (
	ReasonPathEscapesWorkspace Reason = "PATH_ESCAPES_WORKSPACE"
	ReasonInvalidPath          Reason = "INVALID_PATH"
	ReasonNotFound             Reason = "NOT_FOUND"
	ReasonWorkspaceNotFound    Reason = "WORKSPACE_NOT_FOUND"
	ReasonAlreadyExists        Reason = "ALREADY_EXISTS"
	ReasonIsADirectory         Reason = "IS_A_DIRECTORY"
	ReasonNotADirectory        Reason = "NOT_A_DIRECTORY"
	ReasonBinaryFile           Reason = "BINARY_FILE"
	ReasonOldTextNotFound      Reason = "OLD_TEXT_NOT_FOUND"
	ReasonOldTextNotUnique     Reason = "OLD_TEXT_NOT_UNIQUE"
	ReasonContentChanged       Reason = "CONTENT_CHANGED"
	ReasonLossyEncoding        Reason = "LOSSY_ENCODING"
	ReasonRunActive            Reason = "RUN_ACTIVE"
	ReasonQuotaExceeded        Reason = "QUOTA_EXCEEDED"
	ReasonStoreUnavailable     Reason = "STORE_UNAVAILABLE"
	ReasonUnsafeArchive        Reason = "UNSAFE_ARCHIVE"
	ReasonSearchTimeout        Reason = "SEARCH_TIMEOUT"
	ReasonInvalidArgument      Reason = "INVALID_ARGUMENT"
	ReasonNotImplemented       Reason = "NOT_IMPLEMENTED"
	ReasonNotARegularFile      Reason = "NOT_A_REGULAR_FILE"
	ReasonWorkspaceBound       Reason = "WORKSPACE_BOUND"
	ReasonDirectoryNotEmpty    Reason = "DIRECTORY_NOT_EMPTY"
	ReasonInternal             Reason = "INTERNAL"
	ReasonCancelled            Reason = "CANCELLED"
	ReasonDeadlineExceeded     Reason = "DEADLINE_EXCEEDED"
	ReasonUnauthenticated      Reason = "UNAUTHENTICATED"
	ReasonWorkspaceNotAllowed  Reason = "WORKSPACE_NOT_ALLOWED"
	ReasonDataLoss             Reason = "DATA_LOSS"
	ReasonAccessDenied         Reason = "ACCESS_DENIED"
	ReasonIOError              Reason = "IO_ERROR"
	// DiffSnapshots named a snapshot written before manifests carried a file list.
	ReasonSnapshotWithoutFileList Reason = "SNAPSHOT_WITHOUT_FILE_LIST"
	// A read at a snapshot named one in the older format, without a table of contents.
	ReasonSnapshotWithoutContents Reason = "SNAPSHOT_WITHOUT_CONTENTS"
	// The daemon's disk is full (or its file system quota spent); nothing was changed.
	ReasonNoSpace Reason = "NO_SPACE"
	// ReadMedia of a file that is not a PNG, JPEG, GIF, WebP or PDF.
	ReasonNotMedia Reason = "NOT_MEDIA"
	// An image or PDF that cannot be decoded (damaged, cut short, encrypted, or past the decode limits).
	ReasonMediaUnreadable Reason = "MEDIA_UNREADABLE"
	// A watch cursor the workspace's journal no longer holds, or past its last entry.
	ReasonCursorOutOfRange Reason = "CURSOR_OUT_OF_RANGE"
)

// Error is every failure of a call to the daemon: its gRPC code, the reason
// and metadata of its ErrorInfo detail, and the daemon's message.
//
// errors.Is(err, ErrNotFound) and its siblings compare reasons;
// errors.Is(err, context.DeadlineExceeded) and errors.Is(err,
// context.Canceled) compare codes, whether the daemon or the client noticed.
type Error struct {
	Code     codes.Code
	Reason   Reason
	Message  string
	Metadata map[string]string

	status *status.Status // nil for a failure found by the client (see newClientError)
}

// Sentinels for errors.Is: an *Error matches one when their reasons are equal.
var (
	ErrPathEscapesWorkspace = &Error{Reason: ReasonPathEscapesWorkspace}
	ErrInvalidPath          = &Error{Reason: ReasonInvalidPath}
	ErrNotFound             = &Error{Reason: ReasonNotFound}
	ErrWorkspaceNotFound    = &Error{Reason: ReasonWorkspaceNotFound}
	ErrAlreadyExists        = &Error{Reason: ReasonAlreadyExists}
	ErrIsADirectory         = &Error{Reason: ReasonIsADirectory}
	ErrNotADirectory        = &Error{Reason: ReasonNotADirectory}
	ErrBinaryFile           = &Error{Reason: ReasonBinaryFile}
	ErrOldTextNotFound      = &Error{Reason: ReasonOldTextNotFound}
	ErrOldTextNotUnique     = &Error{Reason: ReasonOldTextNotUnique}
	ErrContentChanged       = &Error{Reason: ReasonContentChanged}
	ErrLossyEncoding        = &Error{Reason: ReasonLossyEncoding}
	ErrRunActive            = &Error{Reason: ReasonRunActive}
	ErrQuotaExceeded        = &Error{Reason: ReasonQuotaExceeded}
	ErrStoreUnavailable     = &Error{Reason: ReasonStoreUnavailable}
	ErrUnsafeArchive        = &Error{Reason: ReasonUnsafeArchive}
	ErrInvalidArgument      = &Error{Reason: ReasonInvalidArgument}
	ErrUnauthenticated      = &Error{Reason: ReasonUnauthenticated}
	ErrWorkspaceNotAllowed  = &Error{Reason: ReasonWorkspaceNotAllowed}
	ErrDataLoss             = &Error{Reason: ReasonDataLoss}
	ErrAccessDenied         = &Error{Reason: ReasonAccessDenied}
	ErrIOError              = &Error{Reason: ReasonIOError}
	ErrNoSpace              = &Error{Reason: ReasonNoSpace}
	ErrNotMedia             = &Error{Reason: ReasonNotMedia}
	ErrMediaUnreadable      = &Error{Reason: ReasonMediaUnreadable}
	ErrCursorOutOfRange     = &Error{Reason: ReasonCursorOutOfRange}
)

func (e *Error) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("filetools: %s: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("filetools: %s (%s): %s", e.Code, e.Reason, e.Message)
}

// Is reports whether target is a sentinel with e's reason, or one of
// context.DeadlineExceeded and context.Canceled matching e's code.
func (e *Error) Is(target error) bool {
	switch target {
	case context.DeadlineExceeded:
		return e.Code == codes.DeadlineExceeded
	case context.Canceled:
		return e.Code == codes.Canceled
	}
	var t *Error
	if !errors.As(target, &t) || t.Reason == "" {
		return false
	}
	return t.Reason == e.Reason
}

// GRPCStatus keeps status.FromError and status.Code working on an *Error.
func (e *Error) GRPCStatus() *status.Status {
	if e.status != nil {
		return e.status
	}
	return status.New(e.Code, e.Message)
}

// fromRPC turns what a generated stub returned into an *Error (nil stays nil).
func fromRPC(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		st = status.FromContextError(err) // codes.Unknown unless a context error
	}
	e := &Error{Code: st.Code(), Message: st.Message(), status: st}
	for _, detail := range st.Details() {
		if info, ok := detail.(*errdetails.ErrorInfo); ok {
			e.Reason = Reason(info.GetReason())
			e.Metadata = info.GetMetadata()
			break
		}
	}
	return e
}

// newClientError is a failure the client itself found in what the daemon
// sent (a stream out of order, a checksum that does not match).
func newClientError(code codes.Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
