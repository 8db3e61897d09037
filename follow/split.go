package follow

import "bytes"

// splitter cuts what is read from one file generation (or standard input)
// into whole lines and hands them to Next in chunks, without copying a
// line and without holding more than MaxLine bytes of one line.
type splitter struct {
	f    *Follower
	file string
	free chan []byte // buffers Next is done with; room for all in flight

	buf    []byte // the partial line, then what was read after it
	bufOff int64  // offset in the file of buf[0]
	num    int64  // lines delivered so far

	skipping bool // inside an overlong line, after its first MaxLine bytes
	over     Line // the overlong line being skipped
}

func newSplitter(f *Follower, file string, off int64) *splitter {
	s := &splitter{f: f, file: file, free: make(chan []byte, cap(f.items)+2), bufOff: off}
	s.buf = s.getBuf(readSize)
	return s
}

// getBuf returns an empty buffer with room for n bytes.
func (s *splitter) getBuf(n int) []byte {
	select {
	case b := <-s.free:
		if cap(b) >= n {
			return b[:0]
		}
	default:
	}
	return make([]byte, 0, max(n, readSize))
}

// room returns where the next read goes: at least readSize bytes after
// what buf holds, growing buf (by doubling, up to MaxLine and a read) when
// a long line fills it.
func (s *splitter) room() []byte {
	if cap(s.buf)-len(s.buf) < readSize {
		want := min(max(2*cap(s.buf), len(s.buf)+readSize), s.f.opts.MaxLine+readSize)
		nb := make([]byte, len(s.buf), want)
		copy(nb, s.buf)
		s.buf = nb
	}
	return s.buf[len(s.buf):cap(s.buf)]
}

// took takes n bytes read into room and delivers the lines they end. It
// returns false when following has stopped.
func (s *splitter) took(n int) bool {
	s.buf = s.buf[:len(s.buf)+n]
	if s.skipping {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			s.over.Size += int64(len(s.buf))
			s.bufOff += int64(len(s.buf))
			s.buf = s.buf[:0]
			return true
		}
		s.over.Size += int64(i)
		if !s.sendOver() {
			return false
		}
		s.bufOff += int64(i + 1)
		s.buf = s.buf[:copy(s.buf, s.buf[i+1:])]
	}
	if cut := bytes.LastIndexByte(s.buf, '\n'); cut >= 0 {
		rest := s.buf[cut+1:]
		nb := append(s.getBuf(len(rest)+readSize), rest...)
		data := s.buf[:cut+1]
		lines := int64(bytes.Count(data, []byte{'\n'}))
		if !s.f.send(item{ch: &chunk{file: s.file, data: data, num: s.num + 1, off: s.bufOff, free: s.free}}) {
			return false
		}
		s.num += lines
		s.bufOff += int64(cut + 1)
		s.buf = nb
	}
	if len(s.buf) >= s.f.opts.MaxLine {
		s.skipping = true
		s.over = Line{File: s.file, Offset: s.bufOff, Text: bytes.Clone(s.buf[:overlongPrefix]), Overlong: true, Size: int64(len(s.buf))}
		s.bufOff += int64(len(s.buf))
		s.buf = s.buf[:0]
	}
	return true
}

// sendOver delivers the overlong line being skipped.
func (s *splitter) sendOver() bool {
	s.skipping = false
	s.num++
	l := s.over
	l.Num = s.num
	return s.f.send(item{over: &l})
}

// flush delivers the partial line as a whole one: the input ended, or a
// rotation proved that nothing more will be added to it.
func (s *splitter) flush() bool {
	if s.skipping {
		return s.sendOver()
	}
	if len(s.buf) == 0 {
		return true
	}
	data := s.buf
	s.buf = s.getBuf(readSize)
	if !s.f.send(item{ch: &chunk{file: s.file, data: data, num: s.num + 1, off: s.bufOff, free: s.free}}) {
		return false
	}
	s.num++
	s.bufOff += int64(len(data))
	return true
}

// restart drops what is held and starts again at offset off, counting
// lines from 1.
func (s *splitter) restart(off int64) {
	s.buf = s.buf[:0]
	s.bufOff = off
	s.num = 0
	s.skipping = false
}
