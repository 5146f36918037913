"""Runs python/tests/test_*.py and prints TAP, one line per test, for the project's test
counts: "ok N - name", "ok N - name # SKIP reason", "not ok N - name"."""

import os
import sys
import unittest


class Tap(unittest.TextTestResult):
    n = 0

    def line(self, test, text):
        Tap.n += 1
        print("%s %d - %s" % (text[0], Tap.n, test.id()) + text[1], flush=True)

    def addSuccess(self, test):
        self.line(test, ("ok", ""))

    def addSkip(self, test, reason):
        self.line(test, ("ok", " # SKIP " + reason))

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.line(test, ("not ok", ""))
        print("# " + self._exc_info_to_string(err, test).replace("\n", "\n# "))

    def addError(self, test, err):
        super().addError(test, err)
        self.line(test, ("not ok", ""))
        print("# " + self._exc_info_to_string(err, test).replace("\n", "\n# "))


here = os.path.dirname(os.path.abspath(__file__))
suite = unittest.defaultTestLoader.discover(here, pattern="test_*.py")
with open(os.devnull, "w") as null:
    result = unittest.TextTestRunner(stream=null, resultclass=Tap).run(suite)
print("1..%d" % Tap.n)
sys.exit(0 if result.wasSuccessful() else 1)
