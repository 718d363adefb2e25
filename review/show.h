/* SPDX-License-Identifier: GPL-2.0 */
/*
 * show.h - `latsnap show`: one snapshot for people, with a timeline read from its trace.
 */
#ifndef LATSNAP_SHOW_H
#define LATSNAP_SHOW_H

int show_main(int argc, char **argv);
int show_write_page(const char *snapshot_path, const char *html_path, const char *debug_dir);

#endif /* LATSNAP_SHOW_H */
