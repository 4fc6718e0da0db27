package org.stairsense.core;

/**
 * Rotations of one dynamic-acceleration sample into the Earth frame (spec §3.4): mirrors the
 * per-sample functions of {@code stream/_orientation.py} with the same operations in the same order.
 */
public final class Orientation {
    private Orientation() {
    }

    /**
     * {@code rotate_one}: rotate (x, y, z) from the device frame to East-North-Up by the rotation
     * vector (qx, qy, qz, qw), normalised first, with the matrix of
     * {@code SensorManager.getRotationMatrixFromVector}. Writes {@code out[offset..offset+2]}.
     */
    public static void rotateByQuaternion(double qx, double qy, double qz, double qw,
                                          double x, double y, double z, double[] out, int offset) {
        double n = Math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw);
        qx = qx / n;
        qy = qy / n;
        qz = qz / n;
        qw = qw / n;
        out[offset] = (1 - 2 * (qy * qy + qz * qz)) * x + 2 * (qx * qy - qz * qw) * y + 2 * (qx * qz + qy * qw) * z;
        out[offset + 1] = 2 * (qx * qy + qz * qw) * x + (1 - 2 * (qx * qx + qz * qz)) * y + 2 * (qy * qz - qx * qw) * z;
        out[offset + 2] = 2 * (qx * qz - qy * qw) * x + 2 * (qy * qz + qx * qw) * y + (1 - 2 * (qx * qx + qy * qy)) * z;
    }

    /**
     * {@code vertical_rotate_one}: rotate (x, y, z) by the smallest rotation taking the gravity
     * estimate g to +Z (accelerometer only; Z is exact, the heading turns with the phone).
     * Rodrigues' formula with axis k = u × ẑ; an upside-down phone takes the half turn about X.
     */
    public static void rotateToVertical(double gx, double gy, double gz,
                                        double x, double y, double z, double[] out, int offset) {
        double inv = 1.0 / Math.sqrt(gx * gx + gy * gy + gz * gz);
        double ux = gx * inv;
        double uy = gy * inv;
        double c = gz * inv;
        if (1.0 + c < 1e-24) {
            out[offset] = x;
            out[offset + 1] = -y;
            out[offset + 2] = -z;
            return;
        }
        double kd = (uy * x - ux * y) / (1.0 + c);
        out[offset] = c * x - ux * z + uy * kd;
        out[offset + 1] = c * y - uy * z - ux * kd;
        out[offset + 2] = c * z + ux * x + uy * y;
    }

    /**
     * Mizell (2003), as {@code Standardizer.push} computes it for {@code orientation='mizell'}:
     * vertical part p = ((d·g)/(g·g)) g and horizontal h = d − p, written as
     * {@code out[offset..offset+5] = (p, h)} in the device frame. Returns d·ĝ (positive up).
     */
    public static double mizell(double gx, double gy, double gz,
                                double dx, double dy, double dz, double[] out, int offset) {
        double gg = gx * gx + gy * gy + gz * gz;
        double dg = dx * gx + dy * gy + dz * gz;
        double s = dg / gg;
        double px = s * gx;
        double py = s * gy;
        double pz = s * gz;
        out[offset] = px;
        out[offset + 1] = py;
        out[offset + 2] = pz;
        out[offset + 3] = dx - px;
        out[offset + 4] = dy - py;
        out[offset + 5] = dz - pz;
        return dg / Math.sqrt(gg);
    }
}
