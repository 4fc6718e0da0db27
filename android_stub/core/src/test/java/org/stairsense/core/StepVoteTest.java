package org.stairsense.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link StepVote} on cases worked by hand (the majority over each window and its neighbours, the
 * run's nearest end standing in for missing ones; a flight's onset); parity with Python's
 * {@code StepVote} on random sequences is {@code tests/test_android_parity.py}.
 */
class StepVoteTest {
    private static final long S = 1_000_000_000L;

    /** Votes and the number decided by each push, then by the final flush (the last entry). */
    private static final class Run {
        final List<Integer> votes = new ArrayList<>();
        final List<Integer> perCall = new ArrayList<>();

        void take(StepVote vote, int n) {
            perCall.add(n);
            for (int k = 0; k < n; k++) {
                votes.add(vote.decided(k) ? 1 : 0);
            }
        }

        int[] votes() {
            return votes.stream().mapToInt(Integer::intValue).toArray();
        }

        int[] perCall() {
            return perCall.stream().mapToInt(Integer::intValue).toArray();
        }
    }

    /** Pushes 1-s windows starting at {@code startsS} (seconds), none at the onset threshold, then flushes. */
    private static Run run(int steps, int[] decisions, double[] startsS) {
        return run(steps, decisions, new int[decisions.length], startsS);
    }

    /** The same with each window's onset flag ({@code onsets[i] == 1}: at the onset threshold). */
    private static Run run(int steps, int[] decisions, int[] onsets, double[] startsS) {
        StepVote vote = new StepVote(steps, 1.5);
        Run run = new Run();
        for (int i = 0; i < decisions.length; i++) {
            long start = Math.round(startsS[i] * S);
            run.take(vote, vote.push(decisions[i] == 1, onsets[i] == 1, start, start + S));
        }
        run.take(vote, vote.flush());
        return run;
    }

    /** Back-to-back 1-s windows: one run. */
    private static double[] contiguous(int n) {
        double[] starts = new double[n];
        for (int i = 0; i < n; i++) {
            starts[i] = i;
        }
        return starts;
    }

    @Test
    void threeStepsFlipIsolatedDecisionsAndKeepTheRunsEnds() {
        Run run = run(3, new int[] {0, 1, 0, 1, 1, 0}, contiguous(6));
        assertArrayEquals(new int[] {0, 0, 1, 1, 1, 0}, run.votes());
        // Each window is decided when the next one closes; the last when the flush ends its run.
        assertArrayEquals(new int[] {0, 1, 1, 1, 1, 1, 1}, run.perCall());
    }

    @Test
    void aPauseLongerThanMaxGapEndsTheRun() {
        // 2 s from the third window's end to the fourth's start: [1, 0, 1] and [0, 1, 1] vote apart.
        Run broken = run(3, new int[] {1, 0, 1, 0, 1, 1}, new double[] {0, 1, 2, 5, 6, 7});
        assertArrayEquals(new int[] {1, 1, 1, 0, 1, 1}, broken.votes());
        assertArrayEquals(new int[] {0, 1, 1, 1, 1, 1, 1}, broken.perCall());
        // Exactly max_gap_s (1.5 s) does not break it: the third window is voted with the fourth.
        Run joined = run(3, new int[] {1, 0, 1, 0, 1, 1}, new double[] {0, 1, 2, 4.5, 5.5, 6.5});
        assertArrayEquals(new int[] {1, 1, 0, 1, 1, 1}, joined.votes());
    }

    @Test
    void aFlushEndsTheRunAndTheNextWindowStartsANewOne() {
        StepVote vote = new StepVote(3, 1.5);
        Run run = new Run();
        run.take(vote, vote.push(true, false, 0, S));
        run.take(vote, vote.push(false, false, S, 2 * S));
        assertEquals(1, vote.waiting());
        run.take(vote, vote.flush());  // a segment ended: [1, 0] keep their own decisions
        assertEquals(0, vote.waiting());
        run.take(vote, vote.push(true, false, 2 * S, 3 * S));  // no pause, but a new run after the flush
        run.take(vote, vote.push(true, false, 3 * S, 4 * S));
        run.take(vote, vote.flush());
        assertArrayEquals(new int[] {1, 0, 1, 1}, run.votes());
        assertArrayEquals(new int[] {0, 1, 1, 0, 1, 1}, run.perCall());
        assertEquals(0, vote.flush(), "nothing waits");
    }

    @Test
    void oneStepKeepsEveryDecisionAndDecidesItAtOnce() {
        Random rng = new Random(3);
        int[] decisions = new int[200];
        double[] starts = new double[200];
        double t = 0;
        for (int i = 0; i < decisions.length; i++) {
            decisions[i] = rng.nextInt(2);
            starts[i] = t;
            t += 0.5 + 3 * rng.nextDouble();  // breaks the run now and then: changes nothing
        }
        Run run = run(1, decisions, starts);
        assertArrayEquals(decisions, run.votes());
        int[] once = new int[decisions.length + 1];
        java.util.Arrays.fill(once, 0, decisions.length, 1);
        assertArrayEquals(once, run.perCall());
    }

    @Test
    void fiveStepsStandTheNearestWindowInAtBothEnds() {
        // Padded with the ends: 0 0 [0 1 0 1 1] 1 1; each window votes over the five centred on it.
        Run run = run(5, new int[] {0, 1, 0, 1, 1}, contiguous(5));
        assertArrayEquals(new int[] {0, 0, 1, 1, 1}, run.votes());
        // The first decision waits for the second window after it; the flush decides the last two.
        assertArrayEquals(new int[] {0, 0, 1, 1, 1, 2}, run.perCall());
        // A run of two: 1 1 [1 0] 0 0, each keeps its own decision.
        assertArrayEquals(new int[] {1, 0}, run(5, new int[] {1, 0}, contiguous(2)).votes());
        assertArrayEquals(new int[] {1}, run(5, new int[] {1}, contiguous(1)).votes());
        // A pause decides the old run's two waiting windows in the push that starts the new one.
        Run broken = run(5, new int[] {1, 1, 0, 0, 1, 0}, new double[] {0, 1, 2, 3, 10, 11});
        assertArrayEquals(new int[] {1, 1, 0, 0, 1, 0}, broken.votes());
        assertArrayEquals(new int[] {0, 0, 1, 1, 2, 0, 2}, broken.perCall());
    }

    @Test
    void anOnsetWindowBeforeAStairWindowStartsTheFlight() {
        // The majority of 0 [0 1] is level; the onset window's successor is STAIR before the vote.
        Run run = run(3, new int[] {0, 1, 1}, new int[] {1, 0, 0}, contiguous(3));
        assertArrayEquals(new int[] {1, 1, 1}, run.votes());
        assertArrayEquals(new int[] {0, 1, 1, 1}, run.perCall(), "decided no later than the majority alone");
        assertArrayEquals(new int[] {0, 1, 1}, run(3, new int[] {0, 1, 1}, contiguous(3)).votes(), "without the flag");
        // Five steps: padded 0 0 [0 1 0 0 0], the first window's majority is 1 of 5, its successor STAIR.
        assertArrayEquals(new int[] {1, 0, 0, 0, 0}, run(5, new int[] {0, 1, 0, 0, 0}, new int[] {1, 0, 0, 0, 0},
                contiguous(5)).votes());
        // The run's last but one window, decided by the flush with five steps, still reads its successor.
        assertArrayEquals(new int[] {0, 0, 0, 1, 1}, run(5, new int[] {0, 0, 0, 0, 1}, new int[] {0, 0, 0, 1, 0},
                contiguous(5)).votes());
    }

    @Test
    void anOnsetWindowWithoutASuccessorInItsRunStaysLevel() {
        // Last in its run (the flush ends it): 1 1 [1 0] 0, and no next window to read.
        assertArrayEquals(new int[] {1, 1, 0}, run(3, new int[] {1, 1, 0}, new int[] {0, 0, 1}, contiguous(3)).votes());
        // A flush between it and a STAIR window: the next window starts a new run.
        StepVote vote = new StepVote(3, 1.5);
        Run run = new Run();
        run.take(vote, vote.push(false, false, 0, S));
        run.take(vote, vote.push(false, true, S, 2 * S));
        run.take(vote, vote.flush());
        run.take(vote, vote.push(true, false, 2 * S, 3 * S));
        run.take(vote, vote.push(true, false, 3 * S, 4 * S));
        run.take(vote, vote.flush());
        assertArrayEquals(new int[] {0, 0, 1, 1}, run.votes());
        // A pause over max_gap_s (2 s) before the STAIR windows: they vote in a new run, the onset stays level.
        int[] decisions = {0, 0, 0, 1, 1};
        int[] onsets = {0, 0, 1, 0, 0};
        assertArrayEquals(new int[] {0, 0, 0, 1, 1}, run(3, decisions, onsets, new double[] {0, 1, 2, 5, 6}).votes());
        // Exactly max_gap_s keeps one run: the onset window reads its STAIR successor.
        assertArrayEquals(new int[] {0, 0, 1, 1, 1},
                run(3, decisions, onsets, new double[] {0, 1, 2, 4.5, 5.5}).votes());
    }

    @Test
    void oneStepIgnoresTheOnsetFlag() {
        Run run = run(1, new int[] {0, 1, 1}, new int[] {1, 0, 0}, contiguous(3));
        assertArrayEquals(new int[] {0, 1, 1}, run.votes());
        assertArrayEquals(new int[] {1, 1, 1, 0}, run.perCall(), "each window decided as it closes, as without it");
    }

    @Test
    void anOnsetWindowReadsItsSuccessorsOwnDecisionNotItsVote() {
        // The second window is at the onset threshold; its successor is level, voted STAIR between two
        // STAIR windows ([1 0 1]): no onset, and the majority 0 [1] 0 keeps it level.
        assertArrayEquals(new int[] {0, 0, 1, 1}, run(3, new int[] {0, 1, 0, 1}, new int[] {0, 1, 0, 0},
                contiguous(4)).votes());
        // A level onset window before a level one stays level.
        assertArrayEquals(new int[] {0, 0, 0}, run(3, new int[] {0, 0, 0}, new int[] {1, 1, 1}, contiguous(3)).votes());
    }

    @Test
    void refusesAnEvenOrEmptyVote() {
        for (int steps : new int[] {0, 2, -1}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new StepVote(steps, 1.5));
            assertTrue(e.getMessage().contains("odd whole number >= 1"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> new StepVote(3, 0));
        StepVote vote = new StepVote(3, 1.5);
        vote.push(true, false, 0, S);
        assertThrows(IndexOutOfBoundsException.class, () -> vote.decided(0), "the push decided nothing");
    }
}
