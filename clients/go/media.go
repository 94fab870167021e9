package filetools

import (
	"bytes"
	"context"
	"errors"
	"io"

	filetoolsv1 "github.com/filetools/filetools/clients/go/gen/filetools/v1"
	"google.golang.org/grpc/codes"
)

// ReadMediaOptions for ReadMedia. Zero values take the daemon's defaults.
type ReadMediaOptions struct {
	// PDF: the first page, 1-based; 0 = 1.
	StartPage int64
	// PDF: how many pages; 0 = to the end (within MaxBytes).
	PageCount int64
	// PDF: the most UTF-8 bytes of text; 0 = 1 MiB (also the most).
	MaxBytes int64
	// Image: the most bytes; 0 = 3.75 MiB (also the most). A bigger image is downscaled.
	MaxImageBytes int64
	// Image: the most pixels on the longer side; 0 = 2000 (at most 8000).
	MaxImageSide int32
	// A snapshot id: read the file as it was at that stored snapshot; "" = live.
	AtSnapshot string
}

// MediaImage is the image ReadMedia returned: the file's bytes, or a smaller
// image of it (Downscaled).
type MediaImage struct {
	MediaType                     string
	Data                          []byte
	Width, Height                 int32
	OriginalWidth, OriginalHeight int32
	Downscaled                    bool
}

// PdfPage is one page's text (Cut when MaxBytes cut it).
type PdfPage struct {
	Number int64
	Text   string
	Cut    bool
}

// MediaRead is what ReadMedia gives: Image for an image, Pages (a window of
// them) for a PDF.
type MediaRead struct {
	File *filetoolsv1.FileInfo
	// The file's type: image/png, image/jpeg, image/gif, image/webp or application/pdf.
	MediaType string
	Image     *MediaImage
	Pages     []PdfPage
	// PDF: pages in the document; the page to ask for next (0 at the end).
	PageCount, NextPage int64
	Truncated, EOF      bool
}

// ReadMedia reads an image or a PDF as a model takes it: an image's bytes
// (downscaled by the daemon when over its caps), or a window of a PDF's pages
// as text. A file of any other kind fails with ReasonNotMedia, a damaged one
// with ReasonMediaUnreadable.
func (c *Client) ReadMedia(ctx context.Context, workspace, path string, opts ReadMediaOptions) (*MediaRead, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req := &filetoolsv1.ReadMediaRequest{Workspace: workspace, Path: path, AtSnapshot: opts.AtSnapshot}
	if opts.StartPage > 0 {
		req.StartPage = &opts.StartPage
	}
	if opts.PageCount > 0 {
		req.PageCount = &opts.PageCount
	}
	if opts.MaxBytes > 0 {
		req.MaxBytes = &opts.MaxBytes
	}
	if opts.MaxImageBytes > 0 {
		req.MaxImageBytes = &opts.MaxImageBytes
	}
	if opts.MaxImageSide > 0 {
		req.MaxImageSide = &opts.MaxImageSide
	}
	stream, err := c.files.ReadMedia(ctx, req)
	if err != nil {
		return nil, fromRPC(err)
	}
	var read *MediaRead
	var data bytes.Buffer
	var trailer bool
	var imageSize int64
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fromRPC(err)
		}
		switch event := msg.GetEvent().(type) {
		case *filetoolsv1.ReadMediaResponse_Header:
			h := event.Header
			read = &MediaRead{File: h.GetFile(), MediaType: h.GetMediaType(), PageCount: h.GetPageCount()}
			if i := h.GetImage(); i != nil {
				imageSize = i.GetSize()
				read.Image = &MediaImage{MediaType: i.GetMediaType(), Width: i.GetWidth(), Height: i.GetHeight(), OriginalWidth: i.GetOriginalWidth(), OriginalHeight: i.GetOriginalHeight(), Downscaled: i.GetDownscaled()}
			}
		case *filetoolsv1.ReadMediaResponse_ImageData:
			data.Write(event.ImageData.GetData())
		case *filetoolsv1.ReadMediaResponse_Page:
			if read == nil {
				return nil, newClientError(codes.Internal, "the daemon sent a ReadMedia page before the header")
			}
			read.Pages = append(read.Pages, PdfPage{Number: event.Page.GetNumber(), Text: event.Page.GetText(), Cut: event.Page.GetCut()})
		case *filetoolsv1.ReadMediaResponse_Trailer:
			if read == nil {
				return nil, newClientError(codes.Internal, "the daemon sent the ReadMedia trailer before the header")
			}
			t := event.Trailer
			read.NextPage, read.Truncated, read.EOF, trailer = t.GetNextPage(), t.GetTruncated(), t.GetEof(), true
		}
	}
	if read == nil || !trailer {
		return nil, newClientError(codes.Internal, "the daemon's ReadMedia stream ended without a header and a trailer")
	}
	if read.Image != nil {
		if int64(data.Len()) != imageSize {
			return nil, newClientError(codes.DataLoss, "ReadMedia: %d image bytes arrived, the header said %d", data.Len(), imageSize)
		}
		read.Image.Data = data.Bytes()
	}
	return read, nil
}
