/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LATSNAP_RECORD_H
#define LATSNAP_RECORD_H

int record_main(int argc, char **argv);

#endif /* LATSNAP_RECORD_H */
