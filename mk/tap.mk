# Included by every Makefile.am that has unit tests.
# Unit tests are programs named *.t that print TAP; automake's TAP driver runs them.
TEST_EXTENSIONS = .t
T_LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/config/tap-driver.sh
TAP_CPPFLAGS = -I$(top_srcdir)/src/common/libtap
TAP_LIBS = $(top_builddir)/src/common/libtap/libtap.la
# Each test runs bounded in time, stdin from /dev/null
# (scripts/bounded-test.sh); a Makefile.am whose tests are scripts sets
# T_INTERPRETER to what runs them.
T_LOG_COMPILER = $(SHELL) $(top_srcdir)/scripts/bounded-test.sh $(T_INTERPRETER)
