import { Injectable } from '@nestjs/common';
import { LeaderElection, type Lock, type OnLeadershipAcquired, type OnLeadershipLost } from 'nestjs-redis-lock';

export interface FeedTerm {
  fencingToken: number;
  from: number;
  to?: number;
  /** Prices published in this term. */
  published: number;
}

/**
 * One instance of the app holds the (pretend) connection to the price feed and publishes what
 * it receives; the others stand by and take over when the leader goes away.
 */
@Injectable()
@LeaderElection('price-feed', { ttl: '3s' })
export class PriceFeed implements OnLeadershipAcquired, OnLeadershipLost {
  readonly terms: FeedTerm[] = [];
  private timer?: NodeJS.Timeout;

  get leading(): boolean {
    return this.timer !== undefined;
  }

  onLeadershipAcquired(lock: Lock): void {
    const term: FeedTerm = { fencingToken: lock.fencingToken, from: Date.now(), published: 0 };
    this.terms.push(term);
    // A real feed would pass lock.fencingToken with each write and stop on lock.signal.
    this.timer = setInterval(() => {
      if (!lock.signal.aborted) term.published++;
    }, 250);
  }

  onLeadershipLost(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    const term = this.terms[this.terms.length - 1];
    if (term) term.to = Date.now();
  }
}
