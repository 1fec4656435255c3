import json, random
repos = ['schnet','alphazero','ppo','lm','trainer']
el = []
for n in repos:
    for x in json.load(open(f'/tmp/sample/findings_{n}.json')):
        if x.get('uncalled') is True or x.get('incomplete') is True: continue
        x = dict(x); x['repo'] = n; el.append(x)
el.sort(key=lambda x: (x['repo'], x['file'], x['line'], x['column'], x['check']))
random.seed(20261205)
s = random.sample(el, 40)
s.sort(key=lambda x: (x['repo'], x['file'], x['line'], x['column'], x['check']))
for i, x in enumerate(s, 1): x['id'] = i
json.dump(s, open('/tmp/sample/sample40.json', 'w'), indent=1)
print(len(el), 'eligible; sampled', len(s))
left = [x for x in el if not any(x['file']==y['file'] and x['line']==y['line'] and x['column']==y['column'] and x['check']==y['check'] for y in s)]
print('not sampled:', [(x['repo'], x['file'].split('/')[-1], x['line'], x['check']) for x in left])
