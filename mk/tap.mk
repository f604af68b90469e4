# Included by every Makefile.am that has unit tests.
# Unit tests are programs named *.t that print TAP; automake's TAP driver runs them.
TEST_EXTENSIONS = .t
T_LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/config/tap-driver.sh
TAP_CPPFLAGS = -I$(top_srcdir)/src/common/libtap
TAP_LIBS = $(top_builddir)/src/common/libtap/libtap.la
