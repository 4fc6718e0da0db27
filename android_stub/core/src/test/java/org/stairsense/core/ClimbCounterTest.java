package org.stairsense.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/**
 * {@link ClimbCounter} on cases worked by hand (the closed forms of {@code tests/test_climb_counter.py});
 * parity with Python's {@code ClimbCounter} on random streams is {@code tests/test_android_parity.py}.
 */
class ClimbCounterTest {
    private static final long S = 1_000_000_000L;

    /** Consecutive 1 s windows from second {@code first}: decisions, context changes, end heights. */
    private static void push(ClimbCounter counter, int first, int[] stair, double[] change, double[] height) {
        for (int i = 0; i < stair.length; i++) {
            counter.push(stair[i] == 1, change[i], height[i], (first + i) * S, (first + i + 1) * S);
        }
    }

    /** Stair steps up and down exactly; metres climbed and descended to rounding. */
    private static void assertCounts(ClimbCounter counter, long up, long down, double climbedM, double descendedM) {
        assertEquals(up, counter.up());
        assertEquals(down, counter.down());
        assertEquals(climbedM, counter.climbedM(), 1e-12);
        assertEquals(descendedM, counter.descendedM(), 1e-12);
    }

    @Test
    void aFlightClimbsFromItsFirstStepsContextToItsLastStairStep() {
        ClimbCounter counter = new ClimbCounter(5, 1.5);
        push(counter, 0, new int[] {0, 0, 1, 1, 0, 1, 1, 1, 0, 0},
                new double[] {0, 0, 0.2, 0.4, 0.55, 0.7, 0.9, 0.9, 0.7, 0.4},
                new double[] {0, 0, 0.2, 0.4, 0.55, 0.7, 0.9, 1.1, 1.1, 1.1});
        assertCounts(counter, 5, 0, 1.1, 0.0);
    }

    @Test
    void aFlightCountsOnTheSideOfItsOwnSign() {
        ClimbCounter counter = new ClimbCounter(5, 1.5);
        double[] h = {-0.05, -0.02, 0.2, 0.4, 0.6};
        push(counter, 0, new int[] {1, 1, 1, 1, 1}, h, h);
        assertCounts(counter, 3, 2, 0.6, 0.0);
    }

    @Test
    void theOpenFlightCountsOnceLongEnoughAndItsSignMayTurn() {
        ClimbCounter counter = new ClimbCounter(5, 1.5);
        push(counter, 0, new int[] {1, 1}, new double[] {0.2, 0.4}, new double[] {0.2, 0.4});
        assertEquals(0.0, counter.climbedM());
        push(counter, 2, new int[] {1}, new double[] {0.6}, new double[] {0.6});
        assertEquals(0.6, counter.climbedM(), 1e-12);
        push(counter, 3, new int[] {1}, new double[] {-0.3}, new double[] {-0.3});
        assertEquals(0.0, counter.climbedM());
        assertEquals(0.3, counter.descendedM(), 1e-12);
    }

    @Test
    void loneStairStepsClimbNothingAndANewSegmentKeepsTheClosedFlights() {
        ClimbCounter counter = new ClimbCounter(5, 1.5);
        push(counter, 0, new int[] {1, 0, 0, 0, 0, 0, 1}, new double[] {0.4, 0, 0, 0, 0, 0, -0.3},
                new double[] {0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.1});
        assertEquals(1, counter.up());
        assertEquals(1, counter.down());
        assertEquals(0.0, counter.climbedM());
        push(counter, 10, new int[] {1, 1, 1}, new double[] {3.0, 6.0, 9.0}, new double[] {3.0, 6.0, 9.0});
        counter.newSegment();
        push(counter, 20, new int[] {1, 1}, new double[] {-0.1, -0.2}, new double[] {50.0, 49.8});
        assertEquals(9.0, counter.climbedM(), 1e-12);
        assertEquals(3, counter.floorsAscended());
        assertEquals(0, counter.floorsDescended());
    }

    @Test
    void aContextOfTwoLowersAFlightToTwoStairStepsAndNoneIsRefused() {
        ClimbCounter counter = new ClimbCounter(2, 1.5);
        push(counter, 0, new int[] {1, 1}, new double[] {0.2, 0.4}, new double[] {0.2, 0.4});
        assertEquals(0.4, counter.climbedM(), 1e-12);
        assertThrows(IllegalArgumentException.class, () -> new ClimbCounter(5, 1.5, 0));
    }
}
