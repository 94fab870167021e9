package filetools

import filetoolsv1 "github.com/filetools/filetools/clients/go/gen/filetools/v1"

// The client returns the generated messages as they are; these aliases give
// them short names (their fields and getters are documented in the proto
// files and in gen/filetools/v1).
type (
	FileInfo         = filetoolsv1.FileInfo
	Match            = filetoolsv1.SearchMatch
	FileMatchCount   = filetoolsv1.SearchCount
	WriteResult      = filetoolsv1.WriteResponse
	EditResult       = filetoolsv1.EditResponse
	UploadResult     = filetoolsv1.UploadResponse
	DownloadInfo     = filetoolsv1.DownloadHeader
	Workspace        = filetoolsv1.Workspace
	WorkspaceStatus  = filetoolsv1.GetWorkspaceResponse
	Run              = filetoolsv1.Run
	ActiveRun        = filetoolsv1.ActiveRun
	Snapshot         = filetoolsv1.Snapshot
	Change           = filetoolsv1.Change
	DiffEntry        = filetoolsv1.DiffEntry
	ChangeSummary    = filetoolsv1.ChangeSummary
	FinishRunResult  = filetoolsv1.FinishRunResponse
	AbandonRunResult = filetoolsv1.AbandonRunResponse
	ExportInfo       = filetoolsv1.ExportHeader
	ImportResult     = filetoolsv1.ImportArchiveResponse
	WriteMode        = filetoolsv1.WriteMode
	Newline          = filetoolsv1.Newline
	SearchOrder      = filetoolsv1.SearchOrder
)

// Write modes (WriteOptions.Mode, UploadOptions.Mode); the zero value is
// WriteCreateOrReplace.
const (
	WriteCreateOrReplace = filetoolsv1.WriteMode_WRITE_MODE_CREATE_OR_REPLACE
	WriteCreateOnly      = filetoolsv1.WriteMode_WRITE_MODE_CREATE_ONLY
	WriteReplaceOnly     = filetoolsv1.WriteMode_WRITE_MODE_REPLACE_ONLY
	WriteAppend          = filetoolsv1.WriteMode_WRITE_MODE_APPEND
)

// Line endings of written text (WriteOptions.Newline); the zero value is
// NewlinePreserve.
const (
	NewlinePreserve = filetoolsv1.Newline_NEWLINE_PRESERVE
	NewlineLF       = filetoolsv1.Newline_NEWLINE_LF
	NewlineCRLF     = filetoolsv1.Newline_NEWLINE_CRLF
)

// The order of search results (SearchOptions.Order); the zero value is path order.
const (
	// OrderPath: files in sorted path order; the same tree gives the same results.
	OrderPath = filetoolsv1.SearchOrder_SEARCH_ORDER_PATH
	// OrderFound: as the daemon finds them (directories as the file system lists them, as rg):
	// the first results come sooner; which ones a truncated search returns may differ between calls.
	OrderFound = filetoolsv1.SearchOrder_SEARCH_ORDER_FOUND
)
