package client

import (
	"bufio"
	"io"
)

func bufioReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 256<<10) }
