package org.stairsense.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** Rotations against closed forms and stated properties (spec §3.4). */
class OrientationTest {
    @Test
    void quarterTurnAboutUpMapsEastToNorth() {
        double h = Math.sqrt(0.5);
        double[] out = new double[3];
        Orientation.rotateByQuaternion(0, 0, h, h, 1, 0, 0, out, 0);
        assertArrayEquals(new double[] {0, 1, 0}, out, 1e-15);
    }

    @Test
    void rotationKeepsLengthAndUnnormalisedQuaternionsAreNormalised() {
        Random rng = new Random(2);
        double[] a = new double[3];
        double[] b = new double[3];
        for (int k = 0; k < 1000; k++) {
            double qx = rng.nextGaussian(), qy = rng.nextGaussian(), qz = rng.nextGaussian(), qw = rng.nextGaussian();
            double x = rng.nextGaussian(), y = rng.nextGaussian(), z = rng.nextGaussian();
            Orientation.rotateByQuaternion(qx, qy, qz, qw, x, y, z, a, 0);
            Orientation.rotateByQuaternion(3 * qx, 3 * qy, 3 * qz, 3 * qw, x, y, z, b, 0);
            assertEquals(Math.sqrt(x * x + y * y + z * z), Math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]), 1e-12);
            assertArrayEquals(a, b, 1e-12);
        }
    }

    @Test
    void verticalRotationTakesGravityToUpAndKeepsLength() {
        Random rng = new Random(3);
        double[] out = new double[3];
        for (int k = 0; k < 1000; k++) {
            double gx = rng.nextGaussian(), gy = rng.nextGaussian(), gz = rng.nextGaussian();
            double norm = Math.sqrt(gx * gx + gy * gy + gz * gz);
            Orientation.rotateToVertical(gx, gy, gz, gx, gy, gz, out, 0);
            assertArrayEquals(new double[] {0, 0, norm}, out, 1e-12);
            double x = rng.nextGaussian(), y = rng.nextGaussian(), z = rng.nextGaussian();
            Orientation.rotateToVertical(gx, gy, gz, x, y, z, out, 0);
            assertEquals((x * gx + y * gy + z * gz) / norm, out[2], 1e-12);  // Z is the projection on ĝ
            assertEquals(Math.sqrt(x * x + y * y + z * z), Math.sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2]), 1e-12);
        }
    }

    @Test
    void upsideDownPhoneTakesTheHalfTurnAboutX() {
        double[] out = new double[3];
        Orientation.rotateToVertical(0, 0, -9.8, 1, 2, 3, out, 0);
        assertArrayEquals(new double[] {1, -2, -3}, out, 0);
    }

    @Test
    void mizellSplitsIntoVerticalAndHorizontalParts() {
        double[] out = new double[6];
        double vertical = Orientation.mizell(0, 0, 2, 1, 2, 3, out, 0);
        assertArrayEquals(new double[] {0, 0, 3, 1, 2, 0}, out, 1e-15);
        assertEquals(3, vertical, 1e-15);
    }
}
