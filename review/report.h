/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report.h - `latsnap report`: a LatencyTOP-style table over every snapshot of a directory.
 */
#ifndef LATSNAP_REPORT_H
#define LATSNAP_REPORT_H

int report_main(int argc, char **argv);

#endif /* LATSNAP_REPORT_H */
