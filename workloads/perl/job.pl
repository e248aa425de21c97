# A text-processing job in the manner of 253.perlbmk: words built from a seeded
# generator, counted in hashes, joined, split, matched and sorted; scale rounds.
use strict;
use warnings;
my ($scale, $seed) = @ARGV;
my $state = $seed * 2654435761 % 4294967296 || 1;
sub rnd { $state = ($state * 1103515245 + 12345) % 2147483648; return $state; }
my @letters = ('a' .. 'z');
my $total = 0;
for my $round (1 .. $scale) {
    my (%count, @lines);
    for my $i (1 .. 2000) {
        my @words = map { join '', map { $letters[rnd() % 26] } 1 .. (2 + rnd() % 8) } 1 .. (3 + rnd() % 9);
        push @lines, join ' ', @words;
        $count{$_}++ for @words;
    }
    my @vowelled = grep { /^[aeiou].*[aeiou]$/ } keys %count;
    my @sorted = sort { $count{$b} <=> $count{$a} || $a cmp $b } keys %count;
    my $text = join "\n", @lines;
    (my $upper = $text) =~ s/([aeiou])/uc $1/ge;
    my %pairs;
    for my $line (split /\n/, $upper) {
        my @w = split / /, $line;
        $pairs{"$w[$_] $w[$_ + 1]"} = length $line for 0 .. $#w - 1;
    }
    $total += scalar(@vowelled) + scalar(keys %pairs) + length($sorted[0]) + $count{$sorted[0]};
}
print "$total\n";
