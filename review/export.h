/* SPDX-License-Identifier: GPL-2.0 */
/*
 * export.h - `latsnap export`: a snapshot's events for other tools (Perfetto / Chrome JSON).
 */
#ifndef LATSNAP_EXPORT_H
#define LATSNAP_EXPORT_H

int export_main(int argc, char **argv);

#endif /* LATSNAP_EXPORT_H */
