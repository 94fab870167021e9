package filetools

// read of an image or a PDF in the dispatcher: the image and a line about it,
// or a window of the PDF's pages as text (start_line and line_count count
// pages), after the daemon's Read names the file's media type. The texts are
// clients/ts/src/tools/texts.ts's, byte for byte.

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
)

// Pages a read of a PDF returns unless told otherwise (line_count counts pages there).
const defaultPDFPages = 20

// ImageContent is an image for the model, in MCP's image content shape
// (base64 data and its MIME type); ToolResult's AnthropicContent and
// OpenAIOutput give it in those APIs' shapes.
type ImageContent struct {
	Type     string `json:"type"`
	Data     string `json:"data"`
	MIMEType string `json:"mimeType"`
}

// AnthropicContent is the content of an Anthropic tool_result block: the text
// (a string), or text and image blocks.
func (r ToolResult) AnthropicContent() any {
	if len(r.Images) == 0 {
		return r.Text
	}
	blocks := []map[string]any{{"type": "text", "text": r.Text}}
	for _, image := range r.Images {
		blocks = append(blocks, map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": image.MIMEType, "data": image.Data}})
	}
	return blocks
}

// OpenAIOutput is the output of an OpenAI Responses API function_call_output
// item: the text (a string), or input_text and input_image parts (a data
// URL). Chat Completions' tool messages carry text only.
func (r ToolResult) OpenAIOutput() any {
	if len(r.Images) == 0 {
		return r.Text
	}
	parts := []map[string]any{{"type": "input_text", "text": r.Text}}
	for _, image := range r.Images {
		parts = append(parts, map[string]any{"type": "input_image", "image_url": "data:" + image.MIMEType + ";base64," + image.Data})
	}
	return parts
}

func (d *Dispatcher) readMedia(ctx context.Context, a call, mediaType string) (ToolResult, error) {
	if _, tail := a.arguments["tail"]; tail {
		return ToolResult{}, &Error{Code: codes.InvalidArgument, Reason: ReasonInvalidArgument, Message: mediaTailRefused(a.str("path"), mediaType)}
	}
	startPage := a.integer("start_line", 1)
	media, err := d.client.ReadMedia(ctx, d.workspace, a.str("path"), ReadMediaOptions{
		StartPage: startPage, PageCount: a.integer("line_count", defaultPDFPages), MaxBytes: readMaxBytes, AtSnapshot: a.str("at_snapshot"),
	})
	if err != nil {
		return ToolResult{}, err
	}
	structured := map[string]any{"path": media.File.GetPath(), "version": media.File.GetVersion(), "media_type": media.MediaType}
	if image := media.Image; image != nil {
		size := int64(len(image.Data))
		structured["first_line"], structured["last_line"], structured["total_lines"], structured["next_start_line"], structured["eof"] = int64(0), int64(0), nil, nil, true
		structured["image"] = map[string]any{
			"media_type": image.MediaType, "size": size, "width": int64(image.Width), "height": int64(image.Height),
			"original_width": int64(image.OriginalWidth), "original_height": int64(image.OriginalHeight), "downscaled": image.Downscaled,
		}
		result := ok(imageText(media.File.GetPath(), media.MediaType, media.File.GetSize(), image), structured)
		result.Images = []ImageContent{{Type: "image", Data: base64.StdEncoding.EncodeToString(image.Data), MIMEType: image.MediaType}}
		return result, nil
	}
	first, last := startPage, startPage-1
	var text strings.Builder
	if len(media.Pages) > 0 {
		first, last = media.Pages[0].Number, media.Pages[len(media.Pages)-1].Number
	}
	for _, page := range media.Pages {
		text.WriteString(page.Text)
	}
	structured["first_line"], structured["last_line"], structured["total_lines"] = first, last, media.PageCount
	structured["next_start_line"], structured["eof"], structured["text"] = unlessZero(media.NextPage), media.EOF, text.String()
	return ok(pdfText(media.Pages, media.PageCount, media.NextPage, readMaxBytes), structured), nil
}

var mediaFormats = map[string]string{"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP", "application/pdf": "PDF"}

func formatName(mediaType string) string {
	if name, known := mediaFormats[mediaType]; known {
		return name
	}
	return mediaType
}

func pixels(width, height int32) string {
	return strconv.Itoa(int(width)) + "x" + strconv.Itoa(int(height))
}

// imageText is the text beside an image a read returns (the image itself is a content block).
func imageText(path, fileMediaType string, fileSize int64, image *MediaImage) string {
	head := "Image " + path + " (" + formatName(fileMediaType) + ", " + pixels(image.OriginalWidth, image.OriginalHeight) + " pixels, " + plural(fileSize, "byte", "bytes") + ")"
	if !image.Downscaled {
		return head + ".\n"
	}
	return head + ", shown downscaled to " + pixels(image.Width, image.Height) + " (" + formatName(image.MediaType) + ", " + plural(int64(len(image.Data)), "byte", "bytes") + ").\n"
}

// mediaTailRefused says why a read of an image or a PDF with tail is refused.
func mediaTailRefused(path, mediaType string) string {
	if mediaType == "application/pdf" {
		return path + " is a PDF: read it without tail (start_line and line_count count its pages)"
	}
	return path + " is an image (" + formatName(mediaType) + "): read it without tail"
}

// pdfText is a window of a PDF's pages as text: each page under a line naming it, then where to go on.
func pdfText(pages []PdfPage, pageCount, nextPage, maxBytes int64) string {
	total := plural(pageCount, "page", "pages") + " in all"
	var b strings.Builder
	for _, page := range pages {
		number := strconv.FormatInt(page.Number, 10)
		b.WriteString("--- page " + number + " of " + strconv.FormatInt(pageCount, 10) + " ---\n")
		switch {
		case page.Text == "":
			b.WriteString("(no text on this page)\n")
		case strings.HasSuffix(page.Text, "\n"):
			b.WriteString(page.Text)
		default:
			b.WriteString(page.Text + "\n")
		}
		if page.Cut {
			b.WriteString("(page " + number + " is cut at " + count(maxBytes) + " bytes of text)\n")
		}
	}
	text := b.String()
	if len(pages) == 0 {
		text = "(no pages here; " + total + ")\n"
		if pageCount == 0 {
			text = "(a PDF with no pages)\n"
		}
	}
	if nextPage != 0 {
		text += "… call read with start_line " + strconv.FormatInt(nextPage, 10) + " for the next pages (in a PDF, start_line and line_count count pages); " + total + "\n"
	}
	return text
}
