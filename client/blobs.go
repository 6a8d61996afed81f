package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"albedo/wire"
)

// rawBody is a request body sent as it is, not as JSON: opened again for
// each try of a call.
type rawBody struct {
	ctype string
	size  int64
	open  func() (io.Reader, error)
}

// PutFile uploads the file at path as a blob, unless the daemon holds
// one of its bytes already that this client may read, and returns it as
// an attachment named as the file is. The file is read twice (its hash,
// then its upload), a buffer at a time.
func (c *Client) PutFile(ctx context.Context, path string) (wire.Attachment, error) {
	f, err := os.Open(path)
	if err != nil {
		return wire.Attachment{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return wire.Attachment{}, err
	}
	if !st.Mode().IsRegular() {
		return wire.Attachment{}, fmt.Errorf("%s is not a file", path)
	}
	info, err := c.PutBlob(ctx, f, st.Size(), mime.TypeByExtension(filepath.Ext(path)))
	if err != nil {
		return wire.Attachment{}, fmt.Errorf("upload %s: %w", path, err)
	}
	name := filepath.Base(path)
	if len(name) > wire.MaxAttachmentName {
		name = name[len(name)-wire.MaxAttachmentName:]
	}
	return wire.Attachment{SHA256: info.SHA256, Name: name, MIME: info.MIME, Size: info.Size}, nil
}

// PutBlob uploads size bytes of r as a blob, with ctype as the type its
// sender says (the daemon finds the type in the bytes). It hashes r
// first, asks whether the daemon holds the blob for this client (HEAD),
// and uploads only if not.
func (c *Client) PutBlob(ctx context.Context, r io.ReadSeeker, size int64, ctype string) (wire.BlobInfo, error) {
	h := sha256.New()
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return wire.BlobInfo{}, err
	}
	if _, err := io.CopyN(h, r, size); err != nil {
		return wire.BlobInfo{}, err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if info, err := c.HeadBlob(ctx, sum); err == nil {
		return info, nil
	} else if Code(err) != wire.CodeNotFound {
		return wire.BlobInfo{}, err
	}
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	body := rawBody{ctype: ctype, size: size, open: func() (io.Reader, error) {
		if _, err := r.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		return io.LimitReader(r, size), nil
	}}
	var info wire.BlobInfo
	_, err := c.call(ctx, http.MethodPut, "/v1/blobs/"+sum, nil, body, &info, true)
	return info, err
}

// HeadBlob says what the daemon holds of a blob this client may read:
// not_found for one it may not, as for one that does not exist.
func (c *Client) HeadBlob(ctx context.Context, sum string) (wire.BlobInfo, error) {
	h, err := c.call(ctx, http.MethodHead, "/v1/blobs/"+sum, nil, nil, nil, true)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Status == http.StatusNotFound {
			return wire.BlobInfo{}, &Error{Status: http.StatusNotFound, Code: wire.CodeNotFound, Message: "no blob " + sum}
		}
		return wire.BlobInfo{}, err
	}
	size, _ := strconv.ParseInt(h.Get("Content-Length"), 10, 64)
	return wire.BlobInfo{SHA256: sum, Size: size, MIME: h.Get("X-Albedo-Mime")}, nil
}

// GetBlob writes a blob's bytes to w as they arrive, and returns its
// type. A blob this client may not read is not_found.
func (c *Client) GetBlob(ctx context.Context, sum string, w io.Writer) (string, error) {
	snap, err := c.current(ctx)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, snap.BaseURL+"/v1/blobs/"+sum, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+snap.Token)
	resp, err := c.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// The error's own code and words, as the daemon said them.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		var eb wire.ErrorBody
		if json.Unmarshal(b, &eb) != nil || eb.Error == nil {
			return "", &Error{Status: resp.StatusCode, Code: wire.CodeInternal, Message: fmt.Sprintf("blob %s: %s", sum, resp.Status)}
		}
		return "", &Error{Status: resp.StatusCode, Code: eb.Error.Code, Message: eb.Error.Message}
	}
	want, _ := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64)
	n, err := io.Copy(w, resp.Body)
	if err == nil && n != want {
		err = fmt.Errorf("blob %s: %d bytes of %d", sum, n, want)
	}
	return resp.Header.Get("X-Albedo-Mime"), err
}
