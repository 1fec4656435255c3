# Re-draw sample 6 from a new run's findings (same seed, same eligibility),
# reusing the hand judgments of findings already judged (by place and check).
#   python3 redraw6.py <new findings dir> <first-run findings dir> <judgments dir>
import json, random, sys
newdir, firstdir, judgedir = sys.argv[1:4]
repos = ['scatter', 'frcnn', 'kaldifeat', 'imgmodels', 'pytorchcpp']
key = lambda x: (x['repo'], x['file'], x['line'], x['column'], x['check'])
def load(d):
    out = []
    for D in repos:
        for f in json.load(open(f'{d}/findings_{D}.json')):
            g = dict(f); g['repo'] = D; out.append(g)
    return out
new = load(newdir)
judg = {}
for part in ('A', 'B'):
    judg.update(json.load(open(f'{judgedir}/judgments-sample6-{part}.json')))
s40 = json.load(open(f'{firstdir}/sample40.json'))
judged = {key(x): judg[str(x['n'])] for x in s40}
newkeys = {key(x): x for x in new}
print('first draw, as the new run reports each:')
for x in s40:
    k = key(x); n = newkeys.get(k)
    state = 'gone' if not n else ('uncalled' if n.get('uncalled') else 'eligible')
    if n and (n['dependency'] != x['dependency'] or n['fixable'] != x['fixable']):
        state += ' (now %s%s)' % (n['dependency'], ', fixable' if n['fixable'] else '')
    print(' ', x['n'], x['repo'], x['file'].rsplit('/', 1)[1], x['line'], x['check'],
          'real=' + judged[k]['real'], 'class=' + judged[k]['class'], '->', state)
elig = [x for x in new if not x.get('uncalled') and not x.get('incomplete')]
elig.sort(key=key)
print('eligible', len(elig))
random.seed(20261209)
s = random.sample(elig, 40)
s.sort(key=key)
todo = []
real = 0
for i, x in enumerate(s, 1):
    x['n'] = i
    j = judged.get(key(x))
    if j:
        real += j['real'] == 'yes'
    else:
        todo.append(x)
print('redraw: %d judged before (%d real), %d new' % (40 - len(todo), real, len(todo)))
json.dump(s, open(f'{newdir}/sample40-redraw.json', 'w'), indent=1)
json.dump(todo, open(f'{newdir}/to-judge.json', 'w'), indent=1)
for x in todo:
    print('  new', x['n'], x['repo'], x['file'].split('/' + x['repo'] + '/', 1)[-1], x['line'], x['check'], x['dependency'])
