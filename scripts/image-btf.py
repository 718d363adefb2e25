#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
# image-btf.py IMAGE OUT: the kernel's BTF (its .BTF section, what /sys/kernel/btf/vmlinux
# serves) cut out of a kernel's boot Image, for bpftool to make another architecture's vmlinux.h
# from (make ARCH=arm64 on an x86 machine: Debian's arm64 vmlinuz is an uncompressed Image, no
# ELF, and the running kernel's BTF is this machine's). Found by its header: magic 0xeb9f,
# version 1, header length 24; the blob is the header, the types and the strings after them.
import gzip
import struct
import sys

HDR = struct.Struct('<HBBIIIII')


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: image-btf.py IMAGE OUT')
    with open(sys.argv[1], 'rb') as f:
        data = f.read()
    if data[:2] == b'\x1f\x8b':
        data = gzip.decompress(data)
    best = None
    pos = data.find(b'\x9f\xeb\x01\x00\x18\x00\x00\x00')
    while pos >= 0:
        _, _, _, hdr_len, type_off, type_len, str_off, str_len = HDR.unpack_from(data, pos)
        end = pos + hdr_len + max(type_off + type_len, str_off + str_len)
        # The kernel's own: types before strings, within the image, the largest such blob.
        if type_off == 0 and str_off == type_len and end <= len(data) and type_len > 0:
            if best is None or end - pos > best[1] - best[0]:
                best = (pos, end)
        pos = data.find(b'\x9f\xeb\x01\x00\x18\x00\x00\x00', pos + 1)
    if best is None:
        sys.exit('latsnap: image-btf: %s: no BTF in the image (CONFIG_DEBUG_INFO_BTF off?)'
                 % sys.argv[1])
    with open(sys.argv[2], 'wb') as f:
        f.write(data[best[0]:best[1]])


main()
