"""gensnap_objects - snapshot objects from simulator records.

Builds the Python objects of a snapshot in one format (segments, blocks,
trace entries, allocator settings, annotations) with the sharing a real
snapshot has: one dict per distinct frame, one frames list per stack
(doc/snapshot-format.md §2-§6, §8.3).  Section numbers (§N) refer to
doc/snapshot-format.md.
"""

from gensnap_alloc import ALLOCATED, FREE, STATE_NAMES

def fresh(s):
    """A new str object equal to s (as py::str per frame gives, §8.3).
    CPython returns its cached singletons for '' and 1-char strings."""
    return s.encode('utf-8').decode('utf-8')


class Objects:
    """Turns simulator records into snapshot objects for one format."""

    def __init__(self, fmt, npu=False):
        self.fmt = fmt
        self.npu = npu
        self.frames = {}
        self.lists = {}
        self.empty = []          # the shared empty_frames list

    def frame(self, key):
        d = self.frames.get(key)
        if d is None:
            name, filename, line = key
            d = self.frames[key] = {'name': fresh(name),
                                    'filename': fresh(filename), 'line': line}
        return d

    def stack(self, stk):
        if stk is None:
            return self.empty
        lst = self.lists.get(stk[0])
        if lst is None:
            lst = self.lists[stk[0]] = [self.frame(k) for k in stk[1]]
        return lst

    def release(self, serial):
        self.lists.pop(serial, None)

    # -- segments ---------------------------------------------------------------
    def segment(self, rec):
        blocks = rec['blocks']
        active = [b for b in blocks if b[3] != FREE]
        d = {'device': rec['device'], 'address': rec['address'],
             'total_size': rec['total_size'],
             'allocated_size': sum(b[1] for b in blocks if b[3] == ALLOCATED),
             'active_size': sum(b[1] for b in active)}
        fmt = self.fmt
        if fmt != '1.13':
            d['requested_size'] = sum(b[2] for b in active)
        d['stream'] = rec['stream']
        if self.npu:
            d['segment_pool_id'] = tuple([rec['pool_id'][0], rec['pool_id'][1]])
        d['segment_type'] = rec['kind']
        if fmt in ('2.1', 'newest'):
            if not self.npu:
                d['segment_pool_id'] = tuple([rec['pool_id'][0],
                                              rec['pool_id'][1]])
            d['is_expandable'] = rec['expandable']
            frames = self.stack(rec['stk'])
            if not frames:
                d['frames'] = frames
            d['blocks'] = [self.block(b) for b in blocks]
            if frames:
                d['frames'] = frames
        else:
            d['blocks'] = [self.block(b) for b in blocks]
        return d

    def block(self, b):
        addr, size, req, state, stk = b
        if self.fmt in ('2.1', 'newest'):
            return {'address': addr, 'size': size, 'requested_size': req,
                    'state': STATE_NAMES[state], 'frames': self.stack(stk)}
        d = {'size': size}
        if self.fmt == '2.0':
            d['requested_size'] = req
        d['state'] = STATE_NAMES[state]
        if state != FREE and stk is not None:
            if self.fmt == '1.13':      # fresh frame dicts per entry (§4)
                fr = [{'filename': fresh(f), 'name': fresh(n), 'line': l}
                      for n, f, l in stk[1]]
            else:
                fr = self.stack(stk)
            d['history'] = [{'addr': addr, 'real_size': req, 'frames': fr}]
        return d

    # -- trace entries ------------------------------------------------------------
    def entry(self, ev):
        action, addr, size, stream, t, stk = ev[:6]
        d = {'action': action}
        if action == 'oom':
            d['device_free'] = addr
        else:
            d['addr'] = addr
        d['size'] = size
        d['stream'] = stream
        if self.fmt in ('2.1', 'newest') and not self.npu:
            d['time_us'] = t
        if self.fmt == 'newest' and not self.npu:
            d['compile_context'] = fresh('N/A')
            d['user_metadata'] = fresh(ev[6] if len(ev) > 6 else '')
        if stk is not None:
            d['frames'] = self.stack(stk)
        return d


def allocator_settings(expandable, max_split, alloc_conf=None):
    if alloc_conf is not None:
        return alloc_conf.settings()
    conf = 'expandable_segments:True' if expandable else ''
    return {'PYTORCH_CUDA_ALLOC_CONF': conf,
            'max_split_size': max_split if max_split else -1,
            'garbage_collection_threshold': 0.0,
            'expandable_segments': bool(expandable),
            'pinned_num_register_threads': 1,
            'release_lock_on_cudamalloc': False,
            'pinned_use_cuda_host_register': False,
            'graph_capture_record_stream_reuse': False,
            'roundup_power2_divisions': {str(1 << i): 0 for i in range(16)}}


def annotation_obj(a, stage_first=False):
    """An external_annotations entry (§6.4); `stage_first`: the key order
    of the real 2.8-era training file (stage, name, device, time_us)."""
    name, stage, dev, t = a
    if stage_first:
        return {'stage': stage, 'name': fresh(name), 'device': dev,
                'time_us': t}
    return {'name': fresh(name), 'stage': stage, 'device': dev, 'time_us': t}


def final_segments(sim, ws):
    segs = []
    for d in sim.devs:
        s = d.snapshot()
        if ws is not None and d.dev == 0:
            s.append(ws[0])
            s.sort(key=lambda r: r['address'])
        segs.extend(s)
    return segs
