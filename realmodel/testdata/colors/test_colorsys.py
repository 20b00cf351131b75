# The verify of TestTidyPythonOnARealModel: each conversion of colorsys.py checked on a few
# colours, back and forth. Written for locum's tests.
import unittest

import colorsys

COLOURS = [(0.0, 0.0, 0.0), (1.0, 1.0, 1.0), (1.0, 0.0, 0.0), (0.2, 0.4, 0.6), (0.9, 0.5, 0.1)]


class TestConversions(unittest.TestCase):
    def round_trip(self, to, back):
        for rgb in COLOURS:
            got = back(*to(*rgb))
            for want, have in zip(rgb, got):
                self.assertAlmostEqual(want, have, places=6, msg=f"{to.__name__} {rgb}")

    def test_yiq(self):
        self.round_trip(colorsys.rgb_to_yiq, colorsys.yiq_to_rgb)

    def test_hls(self):
        self.round_trip(colorsys.rgb_to_hls, colorsys.hls_to_rgb)
        self.assertEqual(colorsys.rgb_to_hls(1.0, 0.0, 0.0), (0.0, 0.5, 1.0))

    def test_hsv(self):
        self.round_trip(colorsys.rgb_to_hsv, colorsys.hsv_to_rgb)
        self.assertEqual(colorsys.rgb_to_hsv(0.0, 0.0, 1.0), (2.0 / 3.0, 1.0, 1.0))


if __name__ == "__main__":
    unittest.main()
