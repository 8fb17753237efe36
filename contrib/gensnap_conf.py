"""gensnap_conf - PYTORCH_CUDA_ALLOC_CONF for contrib/gensnap.py.

Reads the settings string the way PyTorch's parser does
(c10/core/AllocatorConfig.cpp: AllocatorConfig::parseArgs; the rules are
listed in doc/snapshot-format.md §13.12): expandable_segments,
max_split_size_mb, max_non_split_rounding_mb, roundup_power2_divisions
(one number, or [MIB:D,...,>:D] per power-of-two interval of MiB) and
garbage_collection_threshold.  Keys about pinned host memory or locking
are accepted and change nothing the generator models.
"""

MiB = 1024 * 1024
K_LARGE_BUFFER = 20 * MiB
INTERVALS = 16            # 1 MiB .. 32 GiB and above
INERT = ('release_lock_on_cudamalloc', 'pinned_use_cuda_host_register',
         'pinned_num_register_threads', 'pinned_use_background_threads',
         'pinned_reserve_segment_size_mb',
         'graph_capture_record_stream_reuse')


class ConfError(ValueError):
    pass


class AllocConf:
    """The settings; the defaults when built without a string."""

    def __init__(self, text=''):
        self.text = text
        self.expandable = False
        self.max_split = None                 # bytes, None: no limit
        self.max_non_split_rounding = K_LARGE_BUFFER
        self.divisions = [0] * INTERVALS
        self.gc_threshold = 0.0
        if text:
            self._parse(text)

    def _parse(self, text):
        toks = lex(text)
        i = 0
        while i < len(toks):
            key = toks[i]
            if key in ',:[]':
                raise ConfError("'%s' where a key was expected" % key)
            if i + 1 >= len(toks) or toks[i + 1] != ':':
                raise ConfError("%s: expected ':' after it" % key)
            if i + 2 >= len(toks):
                raise ConfError('%s: no value' % key)
            i += 2
            val = toks[i]
            if key == 'expandable_segments':
                if val not in ('True', 'False'):
                    raise ConfError('%s: expected True or False, not %r'
                                    % (key, val))
                self.expandable = val == 'True'
            elif key == 'max_split_size_mb':
                self.max_split = mib(key, val)
            elif key == 'max_non_split_rounding_mb':
                self.max_non_split_rounding = mib(key, val)
            elif key == 'garbage_collection_threshold':
                try:
                    g = float(val)
                except ValueError:
                    raise ConfError('%s: %r is not a number' % (key, val))
                if not 0 < g < 1:
                    raise ConfError('%s: %s is not between 0 and 1' %
                                    (key, val))
                self.gc_threshold = g
            elif key == 'roundup_power2_divisions':
                i = self._rounding(toks, i)
            elif key == 'backend':
                if val != 'native':
                    raise ConfError('backend: %r: only the native caching '
                                    'allocator is modelled' % val)
            elif key not in INERT:
                raise ConfError("unknown key '%s'" % key)
            i += 1
            if i < len(toks):
                if toks[i] != ',':
                    raise ConfError("%s: expected ',', not %r" %
                                    (key, toks[i]))
                i += 1

    def _rounding(self, toks, i):
        key = 'roundup_power2_divisions'
        if toks[i] != '[':
            d = divisions(key, toks[i])
            self.divisions = [d] * INTERVALS
            return i
        first, last = True, 0
        i += 1
        while i < len(toks) and toks[i] != ']':
            interval = toks[i]
            if i + 2 >= len(toks) or toks[i + 1] != ':':
                raise ConfError("%s: expected ':' after %s" % (key, interval))
            d = divisions(key, toks[i + 2])
            i += 2
            if interval == '>':
                for k in range(last, INTERVALS):
                    self.divisions[k] = d
            else:
                m = number(key, interval)
                if m <= 0 or m & (m - 1):
                    raise ConfError('%s: interval %s: a power of two (MiB)'
                                    % (key, interval))
                idx = min(m.bit_length() - 1, INTERVALS - 1)
                if first:
                    for k in range(idx):
                        self.divisions[k] = d
                    first = False
                self.divisions[idx] = d
                last = idx
            if i + 1 < len(toks) and toks[i + 1] != ']':
                if toks[i + 1] != ',':
                    raise ConfError("%s: expected ','" % key)
                i += 1
            i += 1
        if i >= len(toks):
            raise ConfError("%s: no closing ']'" % key)
        return i

    def divisions_for(self, size):
        """roundup_power2_divisions(size): the interval of log2(size)
        MiB, clamped to the table."""
        idx = size.bit_length() - 1 - 20
        return self.divisions[max(0, min(idx, INTERVALS - 1))]

    def settings(self):
        """allocator_settings as PyTorch dumps them
        (doc/snapshot-format.md §6.3)."""
        return {'PYTORCH_CUDA_ALLOC_CONF': self.text,
                'max_split_size': self.max_split if self.max_split else -1,
                'garbage_collection_threshold': float(self.gc_threshold),
                'expandable_segments': bool(self.expandable),
                'pinned_num_register_threads': 1,
                'release_lock_on_cudamalloc': False,
                'pinned_use_cuda_host_register': False,
                'graph_capture_record_stream_reuse': False,
                'roundup_power2_divisions':
                    {str(1 << i): self.divisions[i]
                     for i in range(INTERVALS)}}


def lex(text):
    """AllocatorConfig::lexArgs: , : [ ] are tokens of their own, spaces
    vanish."""
    out, buf = [], ''
    for ch in text:
        if ch in ',:[]':
            if buf:
                out.append(buf)
                buf = ''
            out.append(ch)
        elif ch != ' ':
            buf += ch
    if buf:
        out.append(buf)
    return out


def number(key, s):
    if not s.isdigit():
        raise ConfError('%s: %r is not a number' % (key, s))
    return int(s)


def mib(key, s):
    v = number(key, s)
    if v < K_LARGE_BUFFER // MiB:
        raise ConfError('%s: %s is below %d, the least PyTorch accepts' %
                        (key, s, K_LARGE_BUFFER // MiB))
    return v * MiB


def divisions(key, s):
    d = number(key, s)
    if d and d & (d - 1):
        raise ConfError('%s: %s divisions: a power of two or 0' % (key, s))
    return d
