"""Sizes as the viewer writes them (render/fmt.c), for the tests that
compare a screen with a command's JSON."""


def size_short(b):
    """fmt_size_short: "768K", "3.2G", "117M", "512B"."""
    if b < 1024:
        return "%dB" % b
    for unit in range(1, 7):
        d = 1 << (10 * unit)
        t = b // d * 10 + (b % d * 10 + d // 2) // d
        if t < 10240:
            break
    u = "BKMGTPE"[unit]
    if t >= 1000:
        return "%d%s" % ((t + 5) // 10, u)
    return "%d.%d%s" % (t // 10, t % 10, u)


def size_long(b):
    """sv_fmt_size (util/units.c), as the commands print a size:
    "512 B", "12.0 MiB", "1.3 GiB"."""
    if b < 1024:
        return "%d B" % b
    for unit in range(1, 7):
        d = 1 << (10 * unit)
        t = b // d * 10 + (b % d * 10 + d // 2) // d
        if t < 10240:
            break
    u = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")[unit]
    return "%d.%d %s" % (t // 10, t % 10, u)
